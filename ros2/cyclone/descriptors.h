#ifndef SAINT_CYCLONE_DESCRIPTORS_H
#define SAINT_CYCLONE_DESCRIPTORS_H

#include "dds/dds.h"

// saint_descriptor returns idlc's topic descriptor of the DDS type
// type_name ("geometry_msgs::msg::dds_::Twist_"), or NULL.
const dds_topic_descriptor_t *saint_descriptor(const char *type_name);

#endif
