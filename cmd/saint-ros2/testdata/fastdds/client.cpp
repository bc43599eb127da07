// A ROS 2-conventions DDS client built on eProsima Fast DDS 2.9 (not
// Cyclone DDS), with type support that fastddsgen generated from SAINT.OS's
// IDL (ros2/idl). The Go test drives it line by line on stdin:
//
//   match                      wait until every endpoint matched a remote one
//   drive SPEED SECONDS        publish geometry_msgs Twist at 10 Hz; print "odom V X N"
//   head                       print "head PAN TILT ROLL N" of the HeadStates taken so far
//   adopt NODE ROLE GUID SEQ   call the adopt service; print "adopt SUCCESS GUID SEQ PREFIX|MESSAGE"
//   estop 0|1                  publish saint_os EStop; print "estop"
//   tracks                     print "tracks ESTOP MOTORS_ENABLED N" of the latest saint_os TrackState
//   route                      print "route LINEAR ROUTES ESTOP" of the router's tracks output
//                              (its linear value, the routes driving it, the e-stop) in the
//                              latest saint_os RouteStatus
//   pose X Y Z QW QX QY QZ S   publish geometry_msgs PoseStamped (frame base_link) on the left
//                              arm's target_pose at 10 Hz for S seconds; print "pose"
//   arm                        print "arm J0 ... JN N" of the latest saint_os ArmState of the
//                              left arm (joint positions, degrees)
//   limb NS LIMB GUID SEQ      a humanoid limb's node middleware under the robot namespace NS
//                              ("-" for none): take one sensor_msgs JointState of
//                              NS/saint/limb/LIMB/joint_states, then call its request_control;
//                              print "limb JOINTS FIRST_JOINT SUCCESS GUID SEQ UUID" (or
//                              "limb unmatched|nojointstates|timeout")
//   graph NODE                 what `ros2 node list` reads: take ros_discovery_info (transient
//                              local) until a participant announces node NODE; print "graph NS
//                              NAME READERS WRITERS UNKNOWN UNLISTED PADDED USERDATA": its reader
//                              and writer GIDs, how many of them are no GUID of a remote endpoint
//                              discovered, how many remote endpoints of that participant (but its
//                              ros_discovery_info writer) it does not list, whether every GID is
//                              a GUID zero-padded to 24 bytes, and the participant's USER_DATA
//                              (or "graph none")
//   description NS             take NS/robot_description (transient local; NS "-" for none);
//                              print "description BYTES ROBOT_NAME" (or "description none")
//   tfstatic NS                take NS/tf_static (transient local); print "tfstatic N CHILD..."
//   topics                     what `ros2 topic list` lists: print "topics N NAME..." of the DDS
//                              topics of every remote writer and reader discovered so far
//                              (rt/..., rq/...Request, rr/...Reply), sorted
//   quit
//
// Usage: client PROFILE.xml DOMAIN
#include <chrono>
#include <cstdint>
#include <map>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include "geometry_msgsPubSubTypes.h"
#include "nav_msgsPubSubTypes.h"
#include "saint_osPubSubTypes.h"
#include "rmw_dds_commonPubSubTypes.h"
#include "sensor_msgsPubSubTypes.h"
#include "std_msgsPubSubTypes.h"
#include "tf2_msgsPubSubTypes.h"

using namespace eprosima::fastdds::dds;
using Clock = std::chrono::steady_clock;

namespace {

DomainParticipant *participant;
Publisher *publisher;
Subscriber *subscriber;

Topic *topic(TypeSupport type, const std::string &name) {
  type.register_type(participant);
  return participant->create_topic(name, type.get_type_name(), TOPIC_QOS_DEFAULT);
}

// ROS 2's default profile: reliable, volatile, keep last 10.
DataWriter *writer(Topic *t) {
  DataWriterQos q = DATAWRITER_QOS_DEFAULT;
  q.reliability().kind = RELIABLE_RELIABILITY_QOS;
  q.durability().kind = VOLATILE_DURABILITY_QOS;
  q.history().kind = KEEP_LAST_HISTORY_QOS;
  q.history().depth = 10;
  return publisher->create_datawriter(t, q);
}

DataReader *reader(Topic *t) {
  DataReaderQos q = DATAREADER_QOS_DEFAULT;
  q.reliability().kind = RELIABLE_RELIABILITY_QOS;
  q.durability().kind = VOLATILE_DURABILITY_QOS;
  q.history().kind = KEEP_LAST_HISTORY_QOS;
  q.history().depth = 100;
  return subscriber->create_datareader(t, q);
}

bool matched(DataWriter *w) {
  PublicationMatchedStatus st;
  w->get_publication_matched_status(st);
  return st.current_count > 0;
}

bool matched(DataReader *r) {
  SubscriptionMatchedStatus st;
  r->get_subscription_matched_status(st);
  return st.current_count > 0;
}

struct Odom {
  double v = 0, x = 0;
  long n = 0;
};

void take_odom(DataReader *r, Odom &o) {
  nav_msgs::msg::dds_::Odometry_ s;
  SampleInfo info;
  while (r->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
    if (info.valid_data) {
      o.v = s.twist().twist().linear().x();
      o.x = s.pose().pose().position().x();
      o.n++;
    }
  }
}

// Discovery keeps the topic names and GUIDs of the remote endpoints
// discovered and the participants' USER_DATA, as ROS 2's graph does from
// DDS discovery.
class Discovery : public DomainParticipantListener {
 public:
  void on_publisher_discovery(DomainParticipant *p, eprosima::fastrtps::rtps::WriterDiscoveryInfo &&info) override {
    if (info.status == eprosima::fastrtps::rtps::WriterDiscoveryInfo::DISCOVERED_WRITER) {
      on_endpoint(p, info.info.guid(), info.info.topicName().to_string(), true);
    }
  }
  void on_subscriber_discovery(DomainParticipant *p, eprosima::fastrtps::rtps::ReaderDiscoveryInfo &&info) override {
    if (info.status == eprosima::fastrtps::rtps::ReaderDiscoveryInfo::DISCOVERED_READER) {
      on_endpoint(p, info.info.guid(), info.info.topicName().to_string(), false);
    }
  }
  void on_participant_discovery(DomainParticipant *, eprosima::fastrtps::rtps::ParticipantDiscoveryInfo &&info) override {
    if (info.status == eprosima::fastrtps::rtps::ParticipantDiscoveryInfo::DISCOVERED_PARTICIPANT) {
      const auto &ud = info.info.m_userData;
      std::lock_guard<std::mutex> l(mu_);
      user_data_[key(info.info.m_guid.guidPrefix)] = std::string(ud.begin(), ud.end());
    }
  }
  std::set<std::string> names() {
    std::lock_guard<std::mutex> l(mu_);
    return names_;
  }
  // endpoints are the remote endpoints discovered: GUID (16 bytes) →
  // topic, writers and readers apart.
  std::map<std::string, std::string> endpoints(bool writers) {
    std::lock_guard<std::mutex> l(mu_);
    return writers ? writers_ : readers_;
  }
  std::string user_data(const std::string &prefix) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = user_data_.find(prefix);
    return it == user_data_.end() ? "-" : it->second;
  }
  static std::string key(const eprosima::fastrtps::rtps::GuidPrefix_t &p) {
    return std::string(reinterpret_cast<const char *>(p.value), 12);
  }
  static std::string key(const eprosima::fastrtps::rtps::GUID_t &g) {
    return key(g.guidPrefix) + std::string(reinterpret_cast<const char *>(g.entityId.value), 4);
  }

 private:
  void on_endpoint(DomainParticipant *p, const eprosima::fastrtps::rtps::GUID_t &guid, const std::string &name, bool writer) {
    if (guid.guidPrefix == p->guid().guidPrefix) {
      return;  // our own endpoint
    }
    std::lock_guard<std::mutex> l(mu_);
    names_.insert(name);
    (writer ? writers_ : readers_)[key(guid)] = name;
  }
  std::mutex mu_;
  std::set<std::string> names_;
  std::map<std::string, std::string> writers_, readers_;
  std::map<std::string, std::string> user_data_;
};

DataReader *latched_reader(Topic *t) {
  DataReaderQos q = DATAREADER_QOS_DEFAULT;
  q.reliability().kind = RELIABLE_RELIABILITY_QOS;
  q.durability().kind = TRANSIENT_LOCAL_DURABILITY_QOS;
  q.history().kind = KEEP_LAST_HISTORY_QOS;
  q.history().depth = 100;
  return subscriber->create_datareader(t, q);
}

// take_first waits up to 15 s for one valid sample of r.
template <typename T>
bool take_first(DataReader *r, T &out) {
  auto end = Clock::now() + std::chrono::seconds(15);
  while (Clock::now() < end) {
    SampleInfo info;
    while (r->take_next_sample(&out, &info) == ReturnCode_t::RETCODE_OK) {
      if (info.valid_data) {
        return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: client PROFILE.xml DOMAIN\n";
    return 2;
  }
  auto *factory = DomainParticipantFactory::get_instance();
  // Before anything reads a default QoS: a profile loaded later is
  // silently ignored and discovery goes out on every interface.
  if (factory->load_XML_profiles_file(argv[1]) != ReturnCode_t::RETCODE_OK) {
    std::cerr << "cannot load " << argv[1] << "\n";
    return 1;
  }
  // Never freed: the participant's threads may call it until the process ends.
  auto *discovery = new Discovery();
  participant = factory->create_participant_with_profile(std::stoi(argv[2]), "saint_loopback", discovery, StatusMask::none());
  if (participant == nullptr) {
    std::cerr << "cannot create the participant\n";
    return 1;
  }
  publisher = participant->create_publisher(PUBLISHER_QOS_DEFAULT);
  subscriber = participant->create_subscriber(SUBSCRIBER_QOS_DEFAULT);

  DataWriter *cmd_vel = writer(topic(TypeSupport(new geometry_msgs::msg::dds_::Twist_PubSubType()), "rt/saint/tracks/cmd_vel"));
  DataWriter *estop = writer(topic(TypeSupport(new saint_os::msg::dds_::EStop_PubSubType()), "rt/saint/tracks/estop"));
  DataReader *odom = reader(topic(TypeSupport(new nav_msgs::msg::dds_::Odometry_PubSubType()), "rt/saint/tracks/odom"));
  DataReader *head = reader(topic(TypeSupport(new saint_os::msg::dds_::HeadState_PubSubType()), "rt/saint/head/state"));
  DataReader *route = reader(topic(TypeSupport(new saint_os::msg::dds_::RouteStatus_PubSubType()), "rt/saint/router/status"));
  DataReader *tracks = reader(topic(TypeSupport(new saint_os::msg::dds_::TrackState_PubSubType()), "rt/saint/tracks/state"));
  DataWriter *target_pose = writer(topic(TypeSupport(new geometry_msgs::msg::dds_::PoseStamped_PubSubType()), "rt/saint/arms/left/target_pose"));
  DataReader *arm = reader(topic(TypeSupport(new saint_os::msg::dds_::ArmState_PubSubType()), "rt/saint/arms/left/state"));
  DataWriter *adopt_rq = writer(topic(TypeSupport(new saint_os::srv::dds_::AdoptNode_Request_PubSubType()), "rq/saint/nodes/adoptRequest"));
  DataReader *adopt_rr = reader(topic(TypeSupport(new saint_os::srv::dds_::AdoptNode_Response_PubSubType()), "rr/saint/nodes/adoptReply"));
  if (!cmd_vel || !estop || !odom || !head || !route || !tracks || !target_pose || !arm || !adopt_rq || !adopt_rr) {
    std::cerr << "cannot create the endpoints\n";
    return 1;
  }

  Odom o;
  saint_os::msg::dds_::HeadState_ last_head;
  long heads = 0;
  auto take_heads = [&] {
    saint_os::msg::dds_::HeadState_ s;
    SampleInfo info;
    while (head->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
      if (info.valid_data) {
        last_head = s;
        heads++;
      }
    }
  };

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "match") {
      auto end = Clock::now() + std::chrono::seconds(30);
      while (!(matched(cmd_vel) && matched(estop) && matched(odom) && matched(head) && matched(route) && matched(tracks) &&
               matched(target_pose) && matched(arm) && matched(adopt_rq) && matched(adopt_rr))) {
        if (Clock::now() > end) {
          std::cout << "unmatched" << std::endl;
          return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      // Our writers matched the bridge's readers; give the bridge's side
      // time to match ours, which a writer's status does not show.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::cout << "matched" << std::endl;
    } else if (cmd == "drive") {
      double speed = 0, seconds = 0;
      in >> speed >> seconds;
      geometry_msgs::msg::dds_::Twist_ t;
      t.linear().x(speed);
      auto end = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
      while (Clock::now() < end) {
        cmd_vel->write(&t);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        take_odom(odom, o);
      }
      take_odom(odom, o);
      std::cout << "odom " << o.v << " " << o.x << " " << o.n << std::endl;
    } else if (cmd == "head") {
      take_heads();
      std::cout << "head " << last_head.pan() << " " << last_head.tilt() << " " << last_head.roll() << " " << heads << std::endl;
    } else if (cmd == "adopt") {
      std::string node, role;
      uint64_t guid = 0;
      int64_t seq = 0;
      in >> node >> role >> guid >> seq;
      saint_os::srv::dds_::AdoptNode_Request_ rq;
      rq.cdds_request_header_guid(guid);
      rq.cdds_request_header_seq(seq);
      rq.node_id(node);
      rq.role(role);
      adopt_rq->write(&rq);
      bool got = false;
      auto end = Clock::now() + std::chrono::seconds(10);
      while (!got && Clock::now() < end) {
        saint_os::srv::dds_::AdoptNode_Response_ rr;
        SampleInfo info;
        while (adopt_rr->take_next_sample(&rr, &info) == ReturnCode_t::RETCODE_OK) {
          if (!info.valid_data || rr.cdds_request_header_guid() != guid || rr.cdds_request_header_seq() != seq) {
            continue;  // not the reply to this call
          }
          std::cout << "adopt " << (rr.success() ? "true" : "false") << " " << rr.cdds_request_header_guid() << " "
                    << rr.cdds_request_header_seq() << " " << rr.assigned_topic_prefix() << "|" << rr.message() << std::endl;
          got = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!got) {
        std::cout << "adopt timeout" << std::endl;
      }
    } else if (cmd == "estop") {
      int on = 0;
      in >> on;
      saint_os::msg::dds_::EStop_ e;
      e.active(on != 0);
      e.source("ros2");
      e.reason("Fast DDS interop test");
      estop->write(&e);
      std::cout << "estop" << std::endl;
    } else if (cmd == "tracks") {
      saint_os::msg::dds_::TrackState_ s, last;
      SampleInfo info;
      long n = 0;
      while (tracks->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
        if (info.valid_data) {
          last = s;
          n++;
        }
      }
      std::cout << "tracks " << (last.estop_active() ? "true" : "false") << " " << (last.motors_enabled() ? "true" : "false")
                << " " << n << std::endl;
    } else if (cmd == "route") {
      saint_os::msg::dds_::RouteStatus_ s, last;
      SampleInfo info;
      long n = 0;
      while (route->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
        if (info.valid_data) {
          last = s;
          n++;
        }
      }
      float linear = 0;
      std::string routes = "-";
      for (const auto &o : last.outputs()) {
        if (o.target() != "tracks") {
          continue;
        }
        for (const auto &v : o.values()) {
          if (v.name() == "linear") {
            linear = v.value();
          }
        }
        for (const auto &r : o.route_ids()) {
          routes = (routes == "-" ? "" : routes + ",") + r;
        }
      }
      std::cout << "route " << linear << " " << routes << " " << (last.estop_active() ? "true" : "false") << " " << n << std::endl;
    } else if (cmd == "pose") {
      double x = 0, y = 0, z = 0, qw = 1, qx = 0, qy = 0, qz = 0, seconds = 0;
      in >> x >> y >> z >> qw >> qx >> qy >> qz >> seconds;
      geometry_msgs::msg::dds_::PoseStamped_ p;
      p.header().frame_id("base_link");
      p.pose().position().x(x);
      p.pose().position().y(y);
      p.pose().position().z(z);
      p.pose().orientation().w(qw);
      p.pose().orientation().x(qx);
      p.pose().orientation().y(qy);
      p.pose().orientation().z(qz);
      auto end = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
      while (Clock::now() < end) {
        target_pose->write(&p);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      std::cout << "pose" << std::endl;
    } else if (cmd == "arm") {
      saint_os::msg::dds_::ArmState_ s, last;
      SampleInfo info;
      long n = 0;
      while (arm->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
        if (info.valid_data) {
          last = s;
          n++;
        }
      }
      std::cout << "arm";
      for (float j : last.joint_positions()) {
        std::cout << " " << j;
      }
      std::cout << " " << n << std::endl;
    } else if (cmd == "limb") {
      std::string ns, limb;
      uint64_t guid = 0;
      int64_t seq = 0;
      in >> ns >> limb >> guid >> seq;
      if (ns == "-") {
        ns = "";
      }
      const std::string prefix = ns + "/saint/limb/" + limb;
      DataReader *js = reader(topic(TypeSupport(new sensor_msgs::msg::dds_::JointState_PubSubType()), "rt" + prefix + "/joint_states"));
      DataWriter *rq = writer(topic(TypeSupport(new saint_os::srv::dds_::RequestControl_Request_PubSubType()), "rq" + prefix + "/request_controlRequest"));
      DataReader *rr = reader(topic(TypeSupport(new saint_os::srv::dds_::RequestControl_Response_PubSubType()), "rr" + prefix + "/request_controlReply"));
      if (!js || !rq || !rr) {
        std::cerr << "cannot create the endpoints of " << prefix << "\n";
        return 1;
      }
      auto end = Clock::now() + std::chrono::seconds(30);
      while (!(matched(js) && matched(rq) && matched(rr)) && Clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!(matched(js) && matched(rq) && matched(rr))) {
        std::cout << "limb unmatched" << std::endl;
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the bridge's side matching ours
      sensor_msgs::msg::dds_::JointState_ state;
      bool have = false;
      end = Clock::now() + std::chrono::seconds(10);
      while (!have && Clock::now() < end) {
        SampleInfo info;
        while (!have && js->take_next_sample(&state, &info) == ReturnCode_t::RETCODE_OK) {
          have = info.valid_data;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!have) {
        std::cout << "limb nojointstates" << std::endl;
        continue;
      }
      saint_os::srv::dds_::RequestControl_Request_ q;
      q.cdds_request_header_guid(guid);
      q.cdds_request_header_seq(seq);
      q.client("fastdds");
      q.timeout_ms(2000);
      rq->write(&q);
      bool got = false;
      end = Clock::now() + std::chrono::seconds(10);
      while (!got && Clock::now() < end) {
        saint_os::srv::dds_::RequestControl_Response_ r;
        SampleInfo info;
        while (!got && rr->take_next_sample(&r, &info) == ReturnCode_t::RETCODE_OK) {
          if (!info.valid_data || r.cdds_request_header_guid() != guid || r.cdds_request_header_seq() != seq) {
            continue;  // not the reply to this call
          }
          std::cout << "limb " << state.name().size() << " " << (state.name().empty() ? "-" : state.name()[0]) << " "
                    << (r.success() ? "true" : "false") << " " << r.cdds_request_header_guid() << " "
                    << r.cdds_request_header_seq() << " " << (r.uuid().empty() ? "-" : r.uuid()) << std::endl;
          got = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!got) {
        std::cout << "limb timeout" << std::endl;
      }
    } else if (cmd == "graph") {
      std::string node;
      in >> node;
      static DataReader *graph =
          latched_reader(topic(TypeSupport(new rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_PubSubType()), "ros_discovery_info"));
      // The latest sample announcing the node, checked against discovery
      // until they agree (an endpoint made since may be in one and not yet
      // in the other) or 15 s have passed.
      std::string result = "graph none";
      bool agree = false;
      rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_ last;
      bool have = false;
      auto end = Clock::now() + std::chrono::seconds(15);
      while (!agree && Clock::now() < end) {
        rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_ s;
        SampleInfo info;
        while (graph->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
          if (!info.valid_data) {
            continue;
          }
          for (const auto &n : s.node_entities_info_seq()) {
            if (n.node_name() == node) {
              last = s;
              have = true;
            }
          }
        }
        if (have) {
          for (const auto &n : last.node_entities_info_seq()) {
            if (n.node_name() != node) {
              continue;
            }
            const std::string prefix(reinterpret_cast<const char *>(last.gid().data().data()), 12);
            bool padded = true;
            long unknown = 0, unlisted = 0;
            auto gids = [&](const std::vector<rmw_dds_common::msg::dds_::Gid_> &seq, bool writers) {
              auto known = discovery->endpoints(writers);
              std::set<std::string> listed;
              for (const auto &g : seq) {
                std::string guid(reinterpret_cast<const char *>(g.data().data()), 16);
                for (size_t i = 16; i < 24; i++) {
                  padded = padded && g.data()[i] == 0;
                }
                listed.insert(guid);
                if (known.find(guid) == known.end()) {
                  unknown++;
                }
              }
              for (const auto &e : known) {
                if (e.first.compare(0, 12, prefix) == 0 && e.second != "ros_discovery_info" && listed.find(e.first) == listed.end()) {
                  unlisted++;
                }
              }
            };
            gids(n.reader_gid_seq(), false);
            gids(n.writer_gid_seq(), true);
            std::ostringstream o;
            o << "graph " << n.node_namespace() << " " << n.node_name() << " " << n.reader_gid_seq().size() << " "
              << n.writer_gid_seq().size() << " " << unknown << " " << unlisted << " " << (padded ? "true" : "false") << " "
              << discovery->user_data(prefix);
            result = o.str();
            agree = unknown == 0 && unlisted == 0;
          }
        }
        if (!agree) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
      std::cout << result << std::endl;
    } else if (cmd == "description") {
      std::string ns;
      in >> ns;
      if (ns == "-") {
        ns = "";
      }
      DataReader *r = latched_reader(topic(TypeSupport(new std_msgs::msg::dds_::String_PubSubType()), "rt" + ns + "/robot_description"));
      std_msgs::msg::dds_::String_ s;
      if (take_first(r, s)) {
        const std::string &x = s.data();
        auto at = x.find("<robot name=\"");
        std::string name = at == std::string::npos ? "-" : x.substr(at + 13, x.find('"', at + 13) - at - 13);
        std::cout << "description " << x.size() << " " << name << std::endl;
      } else {
        std::cout << "description none" << std::endl;
      }
    } else if (cmd == "tfstatic") {
      std::string ns;
      in >> ns;
      if (ns == "-") {
        ns = "";
      }
      DataReader *r = latched_reader(topic(TypeSupport(new tf2_msgs::msg::dds_::TFMessage_PubSubType()), "rt" + ns + "/tf_static"));
      tf2_msgs::msg::dds_::TFMessage_ s;
      if (take_first(r, s)) {
        std::cout << "tfstatic " << s.transforms().size();
        for (const auto &t : s.transforms()) {
          std::cout << " " << t.child_frame_id();
        }
        std::cout << std::endl;
      } else {
        std::cout << "tfstatic none" << std::endl;
      }
    } else if (cmd == "topics") {
      auto names = discovery->names();
      std::cout << "topics " << names.size();
      for (const auto &n : names) {
        std::cout << " " << n;
      }
      std::cout << std::endl;
    } else if (cmd == "quit") {
      break;
    } else {
      std::cout << "unknown " << cmd << std::endl;
    }
  }
  participant->delete_contained_entities();
  factory->delete_participant(participant);
  return 0;
}
