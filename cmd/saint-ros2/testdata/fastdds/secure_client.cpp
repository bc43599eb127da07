// A ROS 2 workstation's view of the tracks over eProsima Fast DDS 2.9,
// with or without DDS Security (configured wholly by the profile's
// participant properties, as rmw_fastrtps_cpp configures it from an
// SROS2 enclave). The Go test drives it line by line on stdin:
//
//   match SECONDS          wait until cmd_vel (if this participant may publish it) and odom
//                          matched the bridge's; print "matched" or "unmatched"
//   drive SPEED SECONDS    publish geometry_msgs Twist on cmd_vel at 10 Hz; print
//                          "odom V X N" of the odometry taken so far (N samples), or
//                          "odom V X N nowriter" when the participant's permissions
//                          refused the writer
//   quit
//
// Usage: secure_client PROFILE.xml DOMAIN
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/log/OStreamConsumer.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include "geometry_msgsPubSubTypes.h"
#include "nav_msgsPubSubTypes.h"

using namespace eprosima::fastdds::dds;
using Clock = std::chrono::steady_clock;

// Fast DDS's log (security errors among it) on stderr: stdout is the
// protocol with the test.
class StderrConsumer : public OStreamConsumer {
 protected:
  std::ostream &get_stream(const Log::Entry &) override { return std::cerr; }
};

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: secure_client PROFILE.xml DOMAIN\n";
    return 2;
  }
  Log::ClearConsumers();
  Log::RegisterConsumer(std::unique_ptr<LogConsumer>(new StderrConsumer));
  auto *factory = DomainParticipantFactory::get_instance();
  if (factory->load_XML_profiles_file(argv[1]) != ReturnCode_t::RETCODE_OK) {
    std::cerr << "cannot load " << argv[1] << "\n";
    return 1;
  }
  DomainParticipant *participant = factory->create_participant_with_profile(std::stoi(argv[2]), "saint_loopback");
  if (participant == nullptr) {
    std::cerr << "cannot create the participant\n";
    return 1;
  }
  Publisher *publisher = participant->create_publisher(PUBLISHER_QOS_DEFAULT);
  Subscriber *subscriber = participant->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
  TypeSupport twist_type(new geometry_msgs::msg::dds_::Twist_PubSubType());
  TypeSupport odom_type(new nav_msgs::msg::dds_::Odometry_PubSubType());
  twist_type.register_type(participant);
  odom_type.register_type(participant);
  Topic *cmd_vel_topic = participant->create_topic("rt/saint/tracks/cmd_vel", twist_type.get_type_name(), TOPIC_QOS_DEFAULT);
  Topic *odom_topic = participant->create_topic("rt/saint/tracks/odom", odom_type.get_type_name(), TOPIC_QOS_DEFAULT);
  if (!publisher || !subscriber || !cmd_vel_topic || !odom_topic) {
    std::cerr << "cannot create the topics\n";
    return 1;
  }
  // ROS 2's default profile: reliable, volatile, keep last.
  DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
  wq.reliability().kind = RELIABLE_RELIABILITY_QOS;
  wq.durability().kind = VOLATILE_DURABILITY_QOS;
  wq.history().kind = KEEP_LAST_HISTORY_QOS;
  wq.history().depth = 10;
  // Null when the participant's permissions do not allow publishing cmd_vel.
  DataWriter *cmd_vel = publisher->create_datawriter(cmd_vel_topic, wq);
  DataReaderQos rq = DATAREADER_QOS_DEFAULT;
  rq.reliability().kind = RELIABLE_RELIABILITY_QOS;
  rq.durability().kind = VOLATILE_DURABILITY_QOS;
  rq.history().kind = KEEP_LAST_HISTORY_QOS;
  rq.history().depth = 100;
  DataReader *odom = subscriber->create_datareader(odom_topic, rq);
  if (odom == nullptr) {
    std::cerr << "cannot create the odometry reader\n";
    return 1;
  }

  double v = 0, x = 0;
  long n = 0;
  auto take_odom = [&] {
    nav_msgs::msg::dds_::Odometry_ s;
    SampleInfo info;
    while (odom->take_next_sample(&s, &info) == ReturnCode_t::RETCODE_OK) {
      if (info.valid_data) {
        v = s.twist().twist().linear().x();
        x = s.pose().pose().position().x();
        n++;
      }
    }
  };
  auto matched = [&] {
    SubscriptionMatchedStatus rs;
    odom->get_subscription_matched_status(rs);
    if (rs.current_count == 0) {
      return false;
    }
    if (cmd_vel == nullptr) {
      return true;
    }
    PublicationMatchedStatus ws;
    cmd_vel->get_publication_matched_status(ws);
    return ws.current_count > 0;
  };

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "match") {
      double seconds = 0;
      in >> seconds;
      auto end = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
      while (!matched() && Clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (matched()) {
        // Our writer matched the bridge's reader; give the bridge's side
        // time to match ours, which a writer's status does not show.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        std::cout << "matched" << std::endl;
      } else {
        std::cout << "unmatched" << std::endl;
      }
    } else if (cmd == "drive") {
      double speed = 0, seconds = 0;
      in >> speed >> seconds;
      geometry_msgs::msg::dds_::Twist_ t;
      t.linear().x(speed);
      auto end = Clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
      while (Clock::now() < end) {
        if (cmd_vel != nullptr) {
          cmd_vel->write(&t);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        take_odom();
      }
      take_odom();
      std::cout << "odom " << v << " " << x << " " << n << (cmd_vel == nullptr ? " nowriter" : "") << std::endl;
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
