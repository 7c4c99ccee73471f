/*
 * --analyze-trace-proto-content: where the bytes of the trace's packets go,
 * as Perfetto's ProtoContentAnalyzer and SizeProfileComputer measure it.
 *
 * Each analysed TracePacket is walked with the descriptors of our protos
 * (protobuf-c's, from the TracePacket down). A field path is the chain of
 * fields from the packet: a message field continues it, any other field
 * (or a message field not encoded as one) ends it in a leaf with its value's
 * bytes (a varint's minimal encoding, a length-delimited field's payload, 4
 * or 8 for fixed). Fields our protos do not describe add up into one
 * "#unknown" leaf per message; each message's own path gets its overhead:
 * its length less its fields' (tags and length prefixes). Samples of one
 * path and one annotation add up into a size and a count.
 *
 * The annotation says whose bytes they are: a TrackEvent's packet is
 * analysed when the event is parsed, with its category and name
 * (event.category / event.name, either may be NULL); a packet dropped for
 * want of incremental state gets skipped_packet = invalid_incremental_state;
 * any other packet none. Packets with a clock snapshot, a service event, a
 * remote clock sync or an extension descriptor are not analysed (Perfetto's
 * reader returns before it gets to them), nor is a compressed_packets
 * wrapper (its packets are).
 *
 * At end of file each annotation gets a tree of experimental_proto_path
 * rows (field_name "#name", NULL at the root; field_type the message's name
 * or the leaf's type in lower case; the root row carries the annotation as
 * its args) and each path one experimental_proto_content row (path: the
 * names and types joined with '.', total_size = size, count).
 *
 * Messages nested deeper than CONTENT_MAX_DEPTH are measured as leaves, a
 * bound Perfetto does not have (its walk keeps an explicit stack).
 */
#include "proto_int.h"

#include <string.h>

#include "protos.h"

#define CONTENT_MAX_DEPTH 100

/* One path of one annotation. */
struct content_node {
	uint32_t parent; /* TP_NULL_U32: the annotation's root */
	uint32_t group;
	/* the field: NULL at the root and for the unknown leaf */
	const ProtobufCFieldDescriptor *fd;
	bool leaf;    /* ends the path (its type is a scalar type's name) */
	bool unknown; /* the "#unknown" leaf */
	int64_t size, count;
};

/* One annotation, in order of first appearance. */
struct content_group {
	enum proto_content_kind kind;
	uint32_t cat, name; /* TrackEvent: string ids, TP_NULL_STR none */
	uint32_t root;      /* its TracePacket node */
};

struct proto_content {
	VEC(struct content_node) nodes;
	VEC(struct content_group) groups;
	struct hmap children;                /* parent << 32 | field key -> node */
	struct hmap te_groups;               /* cat << 32 | name -> group */
	uint32_t plain_group, skipped_group; /* TP_NULL_U32 until used */
};

void tp_proto_content_enable(struct proto_importer *im)
{
	struct proto_content *c = tb_calloc(1, sizeof *c);
	hmap_init(&c->children);
	hmap_init(&c->te_groups);
	c->plain_group = c->skipped_group = TP_NULL_U32;
	im->content = c;
}

void tp_proto_content_free(struct proto_importer *im)
{
	struct proto_content *c = im->content;
	if (!c)
		return;
	vec_release(&c->nodes);
	vec_release(&c->groups);
	hmap_release(&c->children);
	hmap_release(&c->te_groups);
	tb_free(c);
	im->content = NULL;
}

static uint32_t node_new(struct proto_content *c, uint32_t group, uint32_t parent,
                         const ProtobufCFieldDescriptor *fd, bool leaf, bool unknown)
{
	struct content_node *nd = vec_push_zeroed(&c->nodes);
	nd->parent = parent;
	nd->group = group;
	nd->fd = fd;
	nd->leaf = leaf;
	nd->unknown = unknown;
	return (uint32_t)(c->nodes.len - 1);
}

static uint32_t group_of(struct proto_content *c, enum proto_content_kind kind, uint32_t cat,
                         uint32_t name)
{
	uint32_t *slot = kind == PROTO_CONTENT_PLAIN     ? &c->plain_group
	                 : kind == PROTO_CONTENT_SKIPPED ? &c->skipped_group
	                                                 : NULL;
	uint64_t v;
	if (slot && *slot != TP_NULL_U32)
		return *slot;
	if (!slot && hmap_get(&c->te_groups, (uint64_t)cat << 32 | name, &v))
		return (uint32_t)v;
	uint32_t g = (uint32_t)c->groups.len;
	struct content_group *gr = vec_push_zeroed(&c->groups);
	gr->kind = kind;
	gr->cat = cat;
	gr->name = name;
	gr->root = node_new(c, g, TP_NULL_U32, NULL, false, false);
	if (slot)
		*slot = g;
	else
		hmap_put(&c->te_groups, (uint64_t)cat << 32 | name, g);
	return g;
}

/* The child of parent for field id (0: the unknown leaf); leaf when it
 * ends the path. */
static uint32_t child(struct proto_content *c, uint32_t parent, uint32_t id,
                      const ProtobufCFieldDescriptor *fd, bool leaf)
{
	uint64_t key = (uint64_t)parent << 32 | (uint64_t)id << 1 | leaf, v;
	if (hmap_get(&c->children, key, &v))
		return (uint32_t)v;
	uint32_t n = node_new(c, c->nodes.data[parent].group, parent, fd, leaf, id == 0);
	hmap_put(&c->children, key, n);
	return n;
}

static void sample(struct proto_content *c, uint32_t node, int64_t size)
{
	c->nodes.data[node].size += size;
	c->nodes.data[node].count++;
}

static int64_t field_size(const struct pb_field *f)
{
	switch (f->wire) {
	case PB_WIRE_VARINT: {
		int64_t n = 1;
		for (uint64_t v = f->val; v >= 0x80; v >>= 7)
			n++;
		return n;
	}
	case PB_WIRE_FIXED32:
		return 4;
	case PB_WIRE_FIXED64:
		return 8;
	default:
		return (int64_t)f->len;
	}
}

static void walk(struct proto_content *c, uint32_t node, const ProtobufCMessageDescriptor *d,
                 const uint8_t *p, size_t n, unsigned depth)
{
	int64_t overhead = (int64_t)n, unknown = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		int64_t size = field_size(&f);
		overhead -= size;
		const ProtobufCFieldDescriptor *fd =
		    f.id ? protobuf_c_message_descriptor_get_field(d, f.id) : NULL;
		if (!fd) {
			unknown += size;
			continue;
		}
		if (f.wire == PB_WIRE_LEN && fd->type == PROTOBUF_C_TYPE_MESSAGE &&
		    depth < CONTENT_MAX_DEPTH) {
			/* the node index may move the vector: look it up after */
			uint32_t ch = child(c, node, f.id, fd, false);
			walk(c, ch, fd->descriptor, f.data, f.len, depth + 1);
			continue;
		}
		sample(c, child(c, node, f.id, fd, true), size);
	}
	if (unknown)
		sample(c, child(c, node, 0, NULL, true), unknown);
	sample(c, node, overhead);
}

void tp_proto_content_packet(struct proto_importer *im, const uint8_t *p, size_t n,
                             enum proto_content_kind kind, uint32_t cat, uint32_t name)
{
	struct proto_content *c = im->root->content;
	if (!c)
		return;
	uint32_t g = group_of(c, kind, cat, name);
	walk(c, c->groups.data[g].root, &perfetto__protos__trace_packet__descriptor, p, n, 0);
}

/* A scalar field's type as Perfetto names it (FieldDescriptorProto's type
 * name, lower case, without "type_"). */
static const char *leaf_type(const ProtobufCFieldDescriptor *fd)
{
	switch (fd->type) {
	case PROTOBUF_C_TYPE_INT32:
		return "int32";
	case PROTOBUF_C_TYPE_SINT32:
		return "sint32";
	case PROTOBUF_C_TYPE_SFIXED32:
		return "sfixed32";
	case PROTOBUF_C_TYPE_INT64:
		return "int64";
	case PROTOBUF_C_TYPE_SINT64:
		return "sint64";
	case PROTOBUF_C_TYPE_SFIXED64:
		return "sfixed64";
	case PROTOBUF_C_TYPE_UINT32:
		return "uint32";
	case PROTOBUF_C_TYPE_FIXED32:
		return "fixed32";
	case PROTOBUF_C_TYPE_UINT64:
		return "uint64";
	case PROTOBUF_C_TYPE_FIXED64:
		return "fixed64";
	case PROTOBUF_C_TYPE_FLOAT:
		return "float";
	case PROTOBUF_C_TYPE_DOUBLE:
		return "double";
	case PROTOBUF_C_TYPE_BOOL:
		return "bool";
	case PROTOBUF_C_TYPE_ENUM:
		return "enum";
	case PROTOBUF_C_TYPE_STRING:
		return "string";
	case PROTOBUF_C_TYPE_BYTES:
		return "bytes";
	case PROTOBUF_C_TYPE_MESSAGE:
		return "message";
	}
	return "";
}

static void group_args(struct proto_importer *im, const struct content_group *g)
{
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	tp_args_begin(b);
	if (g->kind == PROTO_CONTENT_TRACK_EVENT) {
		uint32_t k = tp_intern_cstr(tp, "event.category");
		tp_args_add_string(b, k, k, g->cat);
		k = tp_intern_cstr(tp, "event.name");
		tp_args_add_string(b, k, k, g->name);
	} else if (g->kind == PROTO_CONTENT_SKIPPED) {
		uint32_t k = tp_intern_cstr(tp, "skipped_packet");
		tp_args_add_string(b, k, k, tp_intern_cstr(tp, "invalid_incremental_state"));
	}
}

struct content_str {
	char *data;
	size_t len, cap;
};

static void str_add(struct content_str *s, const char *t)
{
	size_t n = strlen(t);
	vec_reserve(s, n);
	memcpy(s->data + s->len, t, n);
	s->len += n;
}

void tp_proto_content_finish(struct proto_importer *im)
{
	struct proto_content *c = im->content;
	if (!c)
		return;
	struct tp *tp = im->tp;
	struct tp_proto_path_table *pt = &tp->t.proto_path;
	struct tp_proto_content_table *ct = &tp->t.proto_content;
	uint32_t *row = tb_malloc((c->nodes.len + 1) * sizeof *row);
	uint32_t *path = tb_malloc((c->nodes.len + 1) * sizeof *path);
	struct content_str s = VEC_INIT;
	/* Nodes were created parents first; each group's root first of all. */
	for (size_t i = 0; i < c->nodes.len; i++) {
		const struct content_node *nd = &c->nodes.data[i];
		const char *fname = NULL, *type;
		uint32_t r = tp_proto_path_append(pt);
		row[i] = r;
		pt->arg_set_id[r] = TP_NULL_U32;
		if (nd->parent == TP_NULL_U32) {
			type = perfetto__protos__trace_packet__descriptor.short_name;
			group_args(im, &c->groups.data[nd->group]);
			pt->arg_set_id[r] = tp_args_commit(tp, &im->args);
		} else if (nd->unknown) {
			fname = "";
			type = "";
		} else {
			fname = nd->fd->name;
			type = nd->leaf ? leaf_type(nd->fd)
			                : ((const ProtobufCMessageDescriptor *)nd->fd->descriptor)
			                      ->short_name;
		}
		pt->parent_id[r] = nd->parent == TP_NULL_U32 ? TP_NULL_U32 : row[nd->parent];
		pt->field_type[r] = tp_intern_cstr(tp, type);
		pt->field_name[r] = TP_NULL_STR;
		/* Perfetto's path string: each field's "#name" (not the root's)
		 * and type, joined with '.'. */
		s.len = 0;
		if (nd->parent != TP_NULL_U32)
			str_add(&s, tp_str(tp, path[nd->parent]));
		if (fname) {
			if (s.len)
				str_add(&s, ".");
			size_t at = s.len;
			str_add(&s, "#");
			str_add(&s, *fname ? fname : "unknown");
			pt->field_name[r] = tp_intern(tp, s.data + at, s.len - at);
		}
		if (s.len)
			str_add(&s, ".");
		str_add(&s, type);
		path[i] = tp_intern(tp, s.data ? s.data : "", s.len);
	}
	/* One content row a path, as every path got a sample. */
	for (size_t i = 0; i < c->nodes.len; i++) {
		const struct content_node *nd = &c->nodes.data[i];
		if (!nd->count)
			continue;
		uint32_t r = tp_proto_content_append(ct);
		ct->path[r] = path[i];
		ct->path_id[r] = row[i];
		ct->total_size[r] = nd->size;
		ct->size[r] = nd->size;
		ct->count[r] = nd->count;
	}
	vec_release(&s);
	tb_free(row);
	tb_free(path);
	tp_proto_content_free(im);
}
