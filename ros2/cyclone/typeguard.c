// The type object guard: Cyclone DDS 0.10 (Debian's 0.10.2, ROS 2
// Humble's) crashes (SIGSEGV in ddsi_xt_type_add_typeobj's validation,
// eclipse-cyclonedds#1554) when it resolves a remote type object with a
// type kind it does not know: XTypes 1.3's TK_INT8 (0x0C) and TK_UINT8
// (0x0D), which newer DDS implementations write for IDL int8/uint8 (ROS 2
// int8, uint8 and byte fields). Any participant on the domain can make it
// do so: a TypeLookup reply is taken for every type id the typelib holds,
// and every endpoint announced with TypeInformation puts its ids there,
// whether or not the reply was asked for.
//
// This file defines ddsi_type_add_typeobj, the typelib's entry for every
// type object it resolves. libddsc calls it through its PLT, so the
// definition in this executable takes its place: it refuses an object
// holding a type identifier 0.10 does not know (the type stays
// unresolved; endpoints of our own types, compiled without type
// information, match by type name and never need it), logs the
// participants announcing that type, and passes every other object to
// libddsc's own.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "dds/dds.h"
#include "dds/ddsi/q_rtps.h"
#include "dds/ddsi/ddsi_xqos.h"
#include "dds/ddsi/ddsi_list_tmpl.h"
#include "dds/ddsi/ddsi_typelib.h"
#include "dds/ddsi/ddsi_xt_impl.h"
#include "typeguard.h"

// known_id says whether Cyclone DDS 0.10 knows type identifier ti, and
// through plain collections the identifiers inside it; *kind is the
// first unknown discriminator.
static bool known_id(const struct DDS_XTypes_TypeIdentifier *ti, uint8_t *kind) {
	if (ti == NULL) {
		*kind = 0;
		return false;
	}
	switch (ti->_d) {
	case DDS_XTypes_TK_BOOLEAN:
	case DDS_XTypes_TK_BYTE:
	case DDS_XTypes_TK_INT16:
	case DDS_XTypes_TK_INT32:
	case DDS_XTypes_TK_INT64:
	case DDS_XTypes_TK_UINT16:
	case DDS_XTypes_TK_UINT32:
	case DDS_XTypes_TK_UINT64:
	case DDS_XTypes_TK_FLOAT32:
	case DDS_XTypes_TK_FLOAT64:
	case DDS_XTypes_TK_FLOAT128:
	case DDS_XTypes_TK_CHAR8:
	case DDS_XTypes_TK_CHAR16:
	case DDS_XTypes_TI_STRING8_SMALL:
	case DDS_XTypes_TI_STRING8_LARGE:
	case DDS_XTypes_TI_STRING16_SMALL:
	case DDS_XTypes_TI_STRING16_LARGE:
	case DDS_XTypes_EK_MINIMAL:
	case DDS_XTypes_EK_COMPLETE:
		return true;
	case DDS_XTypes_TI_PLAIN_SEQUENCE_SMALL:
		return known_id(ti->_u.seq_sdefn.element_identifier, kind);
	case DDS_XTypes_TI_PLAIN_SEQUENCE_LARGE:
		return known_id(ti->_u.seq_ldefn.element_identifier, kind);
	case DDS_XTypes_TI_PLAIN_ARRAY_SMALL:
		return known_id(ti->_u.array_sdefn.element_identifier, kind);
	case DDS_XTypes_TI_PLAIN_ARRAY_LARGE:
		return known_id(ti->_u.array_ldefn.element_identifier, kind);
	case DDS_XTypes_TI_PLAIN_MAP_SMALL:
		return known_id(ti->_u.map_sdefn.key_identifier, kind) && known_id(ti->_u.map_sdefn.element_identifier, kind);
	case DDS_XTypes_TI_PLAIN_MAP_LARGE:
		return known_id(ti->_u.map_ldefn.key_identifier, kind) && known_id(ti->_u.map_ldefn.element_identifier, kind);
	default:
		*kind = ti->_d;
		return false;
	}
}

// A struct's base type may be none.
static bool known_base(const struct DDS_XTypes_TypeIdentifier *ti, uint8_t *kind) {
	return ti->_d == DDS_XTypes_TK_NONE || known_id(ti, kind);
}

// KNOWN_OBJECT checks the type identifiers of a minimal or a complete
// type object (both have the same member paths).
#define KNOWN_OBJECT(o, kind)                                                              \
	do {                                                                                   \
		switch ((o)._d) {                                                                  \
		case DDS_XTypes_TK_STRUCTURE:                                                      \
			if (!known_base(&(o)._u.struct_type.header.base_type, kind))                   \
				return false;                                                              \
			for (uint32_t i = 0; i < (o)._u.struct_type.member_seq._length; i++)           \
				if (!known_id(&(o)._u.struct_type.member_seq._buffer[i].common.member_type_id, kind)) \
					return false;                                                          \
			return true;                                                                   \
		case DDS_XTypes_TK_UNION:                                                          \
			if (!known_id(&(o)._u.union_type.discriminator.common.type_id, kind))          \
				return false;                                                              \
			for (uint32_t i = 0; i < (o)._u.union_type.member_seq._length; i++)            \
				if (!known_id(&(o)._u.union_type.member_seq._buffer[i].common.type_id, kind)) \
					return false;                                                          \
			return true;                                                                   \
		case DDS_XTypes_TK_ANNOTATION:                                                     \
			for (uint32_t i = 0; i < (o)._u.annotation_type.member_seq._length; i++)       \
				if (!known_id(&(o)._u.annotation_type.member_seq._buffer[i].common.member_type_id, kind)) \
					return false;                                                          \
			return true;                                                                   \
		case DDS_XTypes_TK_ALIAS:                                                          \
			return known_id(&(o)._u.alias_type.body.common.related_type, kind);            \
		case DDS_XTypes_TK_SEQUENCE:                                                       \
			return known_id(&(o)._u.sequence_type.element.common.type, kind);              \
		case DDS_XTypes_TK_ARRAY:                                                          \
			return known_id(&(o)._u.array_type.element.common.type, kind);                 \
		case DDS_XTypes_TK_MAP:                                                            \
			return known_id(&(o)._u.map_type.key.common.type, kind) &&                     \
				known_id(&(o)._u.map_type.element.common.type, kind);                      \
		default: /* enums, bitmasks, bitsets: no type identifiers inside */                \
			return true;                                                                   \
		}                                                                                  \
	} while (0)

bool saint_typeobj_known(const struct DDS_XTypes_TypeObject *to, uint8_t *kind) {
	*kind = 0;
	switch (to->_d) {
	case DDS_XTypes_EK_MINIMAL:
		KNOWN_OBJECT(to->_u.minimal, kind);
	case DDS_XTypes_EK_COMPLETE:
		KNOWN_OBJECT(to->_u.complete, kind);
	default:
		return true; // libddsc refuses it itself
	}
}

typedef dds_return_t (*add_typeobj_fn)(struct ddsi_domaingv *gv, struct ddsi_type *type,
                                       const struct DDS_XTypes_TypeObject *type_obj);

// refused logs, in saint-ros2's log format, the type refused and the
// participants whose endpoints announced it.
static void refused(const struct ddsi_type *type, uint8_t kind) {
	char stamp[40] = "";
	struct timespec ts;
	struct tm tm;
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && gmtime_r(&ts.tv_sec, &tm) != NULL) {
		size_t n = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(stamp + n, sizeof stamp - n, ".%03ldZ", ts.tv_nsec / 1000000);
	}
	struct ddsi_typeid_str tid;
	char guids[512] = "";
	size_t off = 0;
	const ddsi_guid_prefix_t *seen[8];
	size_t nseen = 0;
	for (const struct ddsi_type_proxy_guid_list_node *n = type->proxy_guids.head; n != NULL; n = n->next) {
		for (uint32_t i = n->first; i < n->lastp1 && nseen < 8; i++) {
			const ddsi_guid_prefix_t *p = &n->ary[i].prefix;
			bool dup = false;
			for (size_t j = 0; j < nseen && !dup; j++)
				dup = memcmp(seen[j], p, sizeof *p) == 0;
			if (dup)
				continue;
			seen[nseen++] = p;
			// The participant's GUID: the endpoint's prefix, entity 0x1c1.
			off += (size_t)snprintf(guids + off, sizeof guids - off, "%s%" PRIx32 ":%" PRIx32 ":%" PRIx32 ":1c1",
			                        off ? "," : "", p->u[0], p->u[1], p->u[2]);
		}
	}
	fprintf(stderr,
	        "time=%s level=WARN msg=\"refused a remote type object with a type kind Cyclone DDS 0.10 cannot handle "
	        "(it crashes validating it): the type stays unresolved, endpoints match by type name\" "
	        "component=cyclone participant=%s type=\"%s\" kind=0x%02x\n",
	        stamp, guids[0] ? guids : "unknown", ddsi_make_typeid_str_impl(&tid, &type->xt.id.x), kind);
}

dds_return_t ddsi_type_add_typeobj(struct ddsi_domaingv *gv, struct ddsi_type *type,
                                   const struct DDS_XTypes_TypeObject *type_obj) {
	uint8_t kind;
	if (type_obj != NULL && !saint_typeobj_known(type_obj, &kind)) {
		// Reported once per type: a peer that keeps sending the object
		// (each TypeLookup reply does) finds the type invalid already.
		if (type->state != DDSI_TYPE_INVALID) {
			refused(type, kind);
			type->state = DDSI_TYPE_INVALID;
		}
		return DDS_RETCODE_UNSUPPORTED;
	}
	add_typeobj_fn next = (add_typeobj_fn)dlsym(RTLD_NEXT, "ddsi_type_add_typeobj");
	if (next == NULL) {
		return DDS_RETCODE_ERROR;
	}
	return next(gv, type, type_obj);
}

// saint_typeguard_installed says whether libddsc calls the definition
// above: the executable exports it and the dynamic linker bound libddsc's
// call to it rather than to libddsc's own.
bool saint_typeguard_installed(void) {
	void *self = dlsym(RTLD_DEFAULT, "ddsi_type_add_typeobj");
	return self == (void *)ddsi_type_add_typeobj && dlsym(RTLD_NEXT, "ddsi_type_add_typeobj") != NULL;
}
