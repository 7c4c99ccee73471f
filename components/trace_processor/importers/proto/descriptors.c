/*
 * TrackDescriptors and the legacy Thread/ProcessDescriptor packets.
 *
 * Descriptors are recorded when tokenized (uuid -> struct proto_track), so an
 * event may refer to a track whose descriptor sorts later. The track row is
 * created on first use: when the descriptor packet itself is parsed or when
 * an event lands on it, whichever comes first in timestamp order.
 *
 *   thread descriptor          -> the thread's slice track (utid)
 *   process descriptor         -> a process-scoped track (upid)
 *   name, parent thread/process-> a named track scoped to that thread/process
 *   name, no such ancestor     -> a global track, parent_id = parent's track
 *   counter {}                 -> the same scoping with event_type "counter"
 *
 * The first name seen wins until the track is materialised. uuid 0 is the
 * implicit global track "Default Track".
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <string.h>

#define MAX_PARENT_DEPTH 32

struct proto_track *tp_proto_track_find(struct proto_importer *im, uint64_t uuid)
{
	/* A direct-mapped cache of hits in front of the map: events
	 * alternate between a few tracks. Entries stay valid because tracks
	 * are never removed or moved to another index. */
	struct proto_track_slot *c = &im->track_cache[(uuid ^ uuid >> 17) % PROTO_TRACK_CACHE];
	uint64_t v;
	if (c->idx1 && c->uuid == uuid)
		return &im->tracks.data[c->idx1 - 1];
	if (!hmap_get(&im->tracks_by_uuid, uuid, &v))
		return NULL;
	c->uuid = uuid;
	c->idx1 = (uint32_t)v + 1;
	return &im->tracks.data[v];
}

static uint32_t str_field(struct tp *tp, const struct pb_field *f)
{
	return f->wire == PB_WIRE_LEN ? tp_intern(tp, (const char *)f->data, f->len) : 0;
}

static void add_category(struct tp *tp, struct proto_track *t, const struct pb_field *f)
{
	if (!t->category) {
		t->category = str_field(tp, f);
		return;
	}
	char buf[PROTO_KEY_MAX];
	const char *old = tp_str(tp, t->category);
	size_t on = strlen(old);
	if (on + 1 + f->len > sizeof buf)
		return;
	memcpy(buf, old, on);
	buf[on] = ',';
	memcpy(buf + on + 1, f->data, f->len);
	t->category = tp_intern(tp, buf, on + 1 + f->len);
}

static void decode_counter(struct tp *tp, struct proto_track *t, const struct pb_field *cf)
{
	static const char *const units[] = {
	    [PB_E_CounterDescriptor_Unit_UNIT_TIME_NS] = "ns",
	    [PB_E_CounterDescriptor_Unit_UNIT_COUNT] = "count",
	    [PB_E_CounterDescriptor_Unit_UNIT_SIZE_BYTES] = "bytes",
	};
	struct pb_reader r;
	struct pb_field f = {0};
	t->is_counter = true;
	pb_reader_init_field(&r, cf);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_CounterDescriptor_type && f.wire == PB_WIRE_VARINT)
			t->counter_type = (uint32_t)f.val;
		else if (f.id == PB_F_CounterDescriptor_unit && f.wire == PB_WIRE_VARINT &&
		         f.val <= PB_E_CounterDescriptor_Unit_UNIT_SIZE_BYTES && !t->unit)
			t->unit = tp_intern_cstr(tp, units[f.val]);
		else if (f.id == PB_F_CounterDescriptor_unit_multiplier && f.wire == PB_WIRE_VARINT)
			t->unit_multiplier = (int64_t)f.val;
		else if (f.id == PB_F_CounterDescriptor_is_incremental && f.wire == PB_WIRE_VARINT)
			t->is_incremental = f.val != 0;
		else if (f.id == PB_F_CounterDescriptor_unit_name && !t->unit)
			t->unit = str_field(tp, &f);
		else if (f.id == PB_F_CounterDescriptor_y_axis_share_key)
			t->y_axis_share_key = str_field(tp, &f);
		else if (f.id == PB_F_CounterDescriptor_categories && f.wire == PB_WIRE_LEN)
			add_category(tp, t, &f);
	}
	if (t->counter_type == PB_E_CounterDescriptor_BuiltinCounterType_COUNTER_THREAD_TIME_NS)
		t->unit = tp_intern_cstr(tp, "ns");
	else if (t->counter_type ==
	         PB_E_CounterDescriptor_BuiltinCounterType_COUNTER_THREAD_INSTRUCTION_COUNT)
		t->unit = tp_intern_cstr(tp, "count");
	if (!t->name &&
	    t->counter_type == PB_E_CounterDescriptor_BuiltinCounterType_COUNTER_THREAD_TIME_NS)
		t->name = tp_intern_cstr(tp, "thread_time");
	else if (!t->name &&
	         t->counter_type ==
	             PB_E_CounterDescriptor_BuiltinCounterType_COUNTER_THREAD_INSTRUCTION_COUNT)
		t->name = tp_intern_cstr(tp, "thread_instruction_count");
}

int64_t tp_proto_descriptor_tokenize(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct proto_track d;
	memset(&d, 0, sizeof d);
	d.pid = d.tid = -1;
	d.track_id = d.utid = d.upid = TP_NULL_U32;
	bool has_uuid = false, sandboxed = false;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		switch (f.id) {
		case PB_F_TrackDescriptor_uuid:
			has_uuid = true;
			d.uuid = f.val;
			break;
		case PB_F_TrackDescriptor_name:
		case PB_F_TrackDescriptor_static_name:
		case PB_F_TrackDescriptor_atrace_name:
			d.name = str_field(tp, &f);
			break;
		case PB_F_TrackDescriptor_process:
			if (f.wire == PB_WIRE_LEN) {
				d.kind = PT_PROCESS;
				struct pb_field pf = {0};
				if (pb_find_field(f.data, f.len, PB_F_ProcessDescriptor_pid, &pf) ==
				    1)
					d.pid = (int32_t)pf.val;
				if (pb_find_field(f.data, f.len,
				                  PB_F_ProcessDescriptor_process_name, &pf) == 1)
					d.process_name = str_field(tp, &pf);
			}
			break;
		case PB_F_TrackDescriptor_thread:
			if (f.wire == PB_WIRE_LEN) {
				d.kind = PT_THREAD;
				struct pb_field tf = {0};
				if (pb_find_field(f.data, f.len, PB_F_ThreadDescriptor_pid, &tf) ==
				    1)
					d.pid = (int32_t)tf.val;
				if (pb_find_field(f.data, f.len, PB_F_ThreadDescriptor_tid, &tf) ==
				    1)
					d.tid = (int64_t)tf.val;
				if (pb_find_field(f.data, f.len, PB_F_ThreadDescriptor_thread_name,
				                  &tf) == 1)
					d.thread_name = str_field(tp, &tf);
			}
			break;
		case PB_F_TrackDescriptor_parent_uuid:
			d.has_parent = true;
			d.parent_uuid = f.val;
			break;
		case PB_F_TrackDescriptor_chrome_process:
			if (f.wire == PB_WIRE_LEN) {
				struct pb_field cf = {0};
				if (pb_find_field(
				        f.data, f.len,
				        PB_F_ChromeProcessDescriptor_host_app_package_name,
				        &cf) == 1)
					d.host_app = str_field(tp, &cf);
			}
			break;
		case PB_F_TrackDescriptor_chrome_thread:
			if (f.wire == PB_WIRE_LEN) {
				struct pb_field cf = {0};
				sandboxed =
				    pb_find_field(f.data, f.len,
				                  PB_F_ChromeThreadDescriptor_is_sandboxed_tid,
				                  &cf) == 1 &&
				    cf.val;
			}
			break;
		case PB_F_TrackDescriptor_counter:
			if (f.wire == PB_WIRE_LEN)
				decode_counter(tp, &d, &f);
			break;
		case PB_F_TrackDescriptor_description:
			d.description = str_field(tp, &f);
			break;
		case PB_F_TrackDescriptor_state:
			d.is_state = f.wire == PB_WIRE_LEN;
			break;
		case PB_F_TrackDescriptor_process_ordering:
			d.process_explicit =
			    f.val == PB_E_TrackDescriptor_ProcessOrdering_PROCESS_ORDERING_EXPLICIT;
			break;
		case PB_F_TrackDescriptor_thread_ordering:
			d.thread_explicit =
			    f.val == PB_E_TrackDescriptor_ThreadOrdering_THREAD_ORDERING_EXPLICIT;
			break;
		case PB_F_TrackDescriptor_disallow_merging_with_system_tracks:
			d.separate = f.val != 0;
			break;
		case PB_F_TrackDescriptor_sibling_merge_behavior:
			d.merge_none =
			    f.val ==
			    PB_E_TrackDescriptor_SiblingMergeBehavior_SIBLING_MERGE_BEHAVIOR_NONE;
			break;
		case PB_F_TrackDescriptor_child_ordering:
			d.ordering = f.val <= PB_E_TrackDescriptor_ChildTracksOrdering_EXPLICIT
			                 ? (uint32_t)f.val
			                 : 0;
			break;
		case PB_F_TrackDescriptor_sibling_order_rank:
			d.has_rank = true;
			d.rank = (int32_t)f.val;
			break;
		default:
			break;
		}
	}
	if (!has_uuid || pb_reader_error(&r)) {
		tp_stat_inc(tp, TP_STAT_track_event_tokenizer_errors);
		return -1;
	}
	/* A sandboxed tid may repeat in other processes: Perfetto makes it
	 * unique as pid << 32 | tid. */
	if (d.kind == PT_THREAD && sandboxed && d.tid >= 0)
		d.tid = (int64_t)((uint64_t)(uint32_t)d.pid << 32 | (uint32_t)d.tid);
	int64_t tid = d.kind == PT_THREAD ? d.tid : -1;
	struct proto_track *old = tp_proto_track_find(im, d.uuid);
	if (!old) {
		vec_push(&im->tracks, d);
		hmap_put(&im->tracks_by_uuid, d.uuid, im->tracks.len - 1);
		return tid;
	}
	/* A re-emitted descriptor: fill in what the first one lacked; a track
	 * that is never merged with its siblings may also be renamed. */
	if (d.name && (!old->name || old->merge_none)) {
		old->name = d.name;
		if (old->merge_none && old->track_id != TP_NULL_U32)
			tp->t.track.name[old->track_id] = d.name;
	}
	if (!old->process_name)
		old->process_name = d.process_name;
	if (!old->thread_name)
		old->thread_name = d.thread_name;
	if (!old->host_app)
		old->host_app = d.host_app;
	return tid;
}

/* The nearest thread/process ancestor (or t itself), or NULL. */
static struct proto_track *scope_of(struct proto_importer *im, struct proto_track *t)
{
	for (int i = 0; t && i < MAX_PARENT_DEPTH; i++) {
		if (t->kind != PT_GLOBAL)
			return t;
		if (!t->has_parent)
			return NULL;
		t = tp_proto_track_find(im, t->parent_uuid);
	}
	return NULL;
}

/* The thread / process a descriptor stands for, bound on first use. */
static uint32_t desc_utid(struct proto_importer *im, struct proto_track *s)
{
	if (s->utid == TP_NULL_U32)
		s->utid = tp_thread_for_tid(im->tp, s->tid, s->pid > 0 ? s->pid : -1);
	return s->utid;
}

static uint32_t desc_upid(struct proto_importer *im, struct proto_track *s)
{
	if (s->upid == TP_NULL_U32)
		s->upid = tp_process_for_pid(im->tp, s->pid);
	return s->upid;
}

uint32_t tp_proto_track_utid(struct proto_importer *im, struct proto_track *t)
{
	struct proto_track *s = scope_of(im, t);
	if (!s || s->kind != PT_THREAD)
		return TP_NULL_U32;
	return desc_utid(im, s);
}

/* Perfetto's source args of a descriptor track: where it came from and the
 * hints the UI needs (ordering, description, counter details). */
static uint32_t track_args(struct proto_importer *im, const struct proto_track *t, bool root,
                           uint32_t seq_id)
{
	static const char *const orderings[] = {NULL, "lexicographic", "chronological", "explicit"};
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	uint32_t k;
	uint64_t v;
	tp_args_begin(b);
	k = tp_intern_cstr(tp, "source");
	tp_args_add_string(b, k, k, tp_intern_cstr(tp, "descriptor"));
	k = tp_intern_cstr(tp, "trace_id");
	tp_args_add_int(b, k, k, (int64_t)t->uuid);
	k = tp_intern_cstr(tp, "is_root_in_scope");
	tp_args_add_bool(b, k, k, root);
	if (t->is_counter && t->category) {
		k = tp_intern_cstr(tp, "category");
		tp_args_add_string(b, k, k, t->category);
	}
	if (t->is_counter && (t->counter_type == 1 || t->counter_type == 2)) {
		k = tp_intern_cstr(tp, "builtin_counter_type");
		tp_args_add_string(b, k, k,
		                   tp_intern_cstr(tp, t->counter_type == 1
		                                          ? "thread_time"
		                                          : "thread_instruction_count"));
	}
	if (t->is_counter && t->y_axis_share_key) {
		k = tp_intern_cstr(tp, "y_axis_share_key");
		tp_args_add_string(b, k, k, t->y_axis_share_key);
	}
	if (seq_id != PROTO_NO_SEQ && hmap_get(&im->first_packet_seqs, seq_id, &v)) {
		k = tp_intern_cstr(tp, "has_first_packet_on_sequence");
		tp_args_add_bool(b, k, k, true);
	}
	if (t->ordering) {
		k = tp_intern_cstr(tp, "child_ordering");
		tp_args_add_string(b, k, k, tp_intern_cstr(tp, orderings[t->ordering]));
	}
	if (t->has_rank) {
		k = tp_intern_cstr(tp, "sibling_order_rank");
		tp_args_add_int(b, k, k, t->rank);
	}
	if (t->description) {
		k = tp_intern_cstr(tp, "description");
		tp_args_add_string(b, k, k, t->description);
	}
	return tp_args_commit(tp, b);
}

/*
 * Create the track row of a descriptor, Perfetto's way:
 *   root thread (the thread descriptor itself): the thread's own track,
 *     unless disallow_merging_with_system_tracks or a counter: a new track
 *   root process: a new process-scoped track
 *   below a thread/process: a new track scoped to it; parent_id only when
 *     the parent is not itself the thread/process descriptor
 *   global: a new track, parent_id = the parent's track
 * Only tracks other than the thread's own get source args. Children without
 * a name of their own take the name of their first event.
 */
static uint32_t materialise(struct proto_importer *im, struct proto_track *t, int depth,
                            uint32_t event_name, uint32_t seq_id)
{
	struct tp *tp = im->tp;
	struct tp_track_key key = {.type = "track_event",
	                           .event_type = t->is_counter ? "counter"
	                                         : t->is_state ? "state"
	                                                       : "slice",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = -1,
	                           .name = t->name};
	uint32_t id, parent_track = TP_NULL_U32;
	struct proto_track *parent = NULL;
	if (t->has_parent && t->parent_uuid != 0 && depth < MAX_PARENT_DEPTH) {
		parent = tp_proto_track_find(im, t->parent_uuid);
		if (parent && parent != t)
			parent_track = parent->track_id != TP_NULL_U32
			                   ? parent->track_id
			                   : materialise(im, parent, depth + 1, 0, seq_id);
		else
			parent = NULL;
	}
	struct proto_track *s = scope_of(im, t);
	bool root = s == t;
	if (!root && !t->is_counter && !key.name)
		key.name = event_name;
	if (s && s->kind == PT_THREAD) {
		key.utid = desc_utid(im, s);
		if (root && !t->is_counter && !t->is_state && !t->separate) {
			id = tp_track_for_thread(tp, (uint32_t)key.utid);
			goto done;
		}
	} else if (s && s->kind == PT_PROCESS) {
		key.upid = desc_upid(im, s);
	}
	if (t->uuid == 0)
		root = true; /* the default track is the root of the global scope */
	id = tp_track_new(tp, &key);
	if (parent_track != TP_NULL_U32 && !root && parent->kind == PT_GLOBAL)
		tp->t.track.parent_id[id] = parent_track;
	tp->t.track.unit[id] = t->unit;
	tp->t.track.source_arg_set_id[id] = track_args(im, t, root, seq_id);
done:
	/* t is still valid: im->tracks grows at tokenize time and in
	 * tp_proto_track_resolve_for() before materialise() is called. */
	t->track_id = id;
	if (tp->t.track.uuid[id] == TP_NULL_I64)
		tp->t.track.uuid[id] = (int64_t)t->uuid;
	if (t->description && !tp->t.track.description[id])
		tp->t.track.description[id] = t->description;
	return id;
}

uint32_t tp_proto_track_resolve_for(struct proto_importer *im, uint64_t uuid, uint32_t event_name,
                                    uint32_t seq_id)
{
	struct proto_track *t = tp_proto_track_find(im, uuid);
	if (!t && uuid != 0) {
		/* No descriptor: an implicit global track, as in Perfetto. */
		struct proto_track d;
		memset(&d, 0, sizeof d);
		d.uuid = uuid;
		d.pid = d.tid = -1;
		d.track_id = d.utid = d.upid = TP_NULL_U32;
		vec_push(&im->tracks, d);
		hmap_put(&im->tracks_by_uuid, uuid, im->tracks.len - 1);
		t = &im->tracks.data[im->tracks.len - 1];
	}
	if (!t) {
		if (im->default_track == TP_NULL_U32) {
			struct proto_track d;
			memset(&d, 0, sizeof d);
			d.name = tp_intern_cstr(im->tp, "Default Track");
			/* As Perfetto: a global track merged by name (its
			 * TrackCompressor's first and only lane). */
			struct tp_track_key key = {.type = "global_merged_track_event",
			                           .event_type = "slice",
			                           .utid = -1,
			                           .upid = -1,
			                           .cpu = -1,
			                           .name = d.name};
			struct tp *tp = im->tp;
			uint32_t id = tp_track_new(tp, &key), k;
			struct tp_args_builder *b = &tp->args_scratch;
			tp_args_begin(b);
			k = tp_intern_cstr(tp, "parent_track_uuid");
			tp_args_add_int(b, k, k, 0);
			k = tp_intern_cstr(tp, "merge_key_type");
			tp_args_add_int(b, k, k, 0); /* by name */
			k = tp_intern_cstr(tp, "merge_key_value");
			tp_args_add_string(b, k, k, d.name);
			k = tp_intern_cstr(tp, "track_compressor_idx");
			tp_args_add_int(b, k, k, 0);
			tp->t.track.dimension_arg_set_id[id] = tp_args_commit(tp, b);
			tp->t.track.track_group_id[id] = tp->track_groups++;
			tp->t.track.source_arg_set_id[id] = track_args(im, &d, true, PROTO_NO_SEQ);
			im->default_track = id;
		}
		return im->default_track;
	}
	if (t->track_id != TP_NULL_U32)
		return t->track_id;
	return materialise(im, t, 0, event_name, uuid ? seq_id : PROTO_NO_SEQ);
}

uint32_t tp_proto_track_resolve(struct proto_importer *im, uint64_t uuid)
{
	return tp_proto_track_resolve_for(im, uuid, 0, PROTO_NO_SEQ);
}

void tp_proto_descriptor_parse(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_field f = {0};
	if (pb_find_field(p, n, PB_F_TrackDescriptor_uuid, &f) != 1)
		return;
	struct proto_track *t = tp_proto_track_find(im, f.val);
	if (!t)
		return;
	/* A second descriptor (another uuid) for a tid or pid: reuse, as in
	 * Perfetto the old thread/process ends and a new one starts. */
	if (t->kind == PT_THREAD && t->utid == TP_NULL_U32) {
		struct proto_track *old = NULL;
		uint64_t v;
		if (hmap_get(&im->desc_of_tid, (uint64_t)t->tid, &v) && v != t->uuid)
			old = tp_proto_track_find(im, v);
		if (old && old->utid != TP_NULL_U32)
			tp_thread_end(tp, old->utid, TP_NULL_I64);
		hmap_put(&im->desc_of_tid, (uint64_t)t->tid, t->uuid);
	} else if (t->kind == PT_PROCESS && t->upid == TP_NULL_U32) {
		struct proto_track *old = NULL;
		uint64_t v;
		if (hmap_get(&im->desc_of_pid, (uint64_t)t->pid, &v) && v != t->uuid)
			old = tp_proto_track_find(im, v);
		if (old && old->upid != TP_NULL_U32)
			tp_process_end(tp, old->upid, TP_NULL_I64);
		hmap_put(&im->desc_of_pid, (uint64_t)t->pid, t->uuid);
	}
	/* The root descriptor may ask for explicit process / thread order:
	 * ranks become sort index hints (the last one for a thread wins). */
	struct proto_track *root = tp_proto_track_find(im, 0);
	if (t->kind == PT_THREAD) {
		uint32_t utid = desc_utid(im, t);
		tp_thread_set_name(tp, utid, t->thread_name);
		if (t->has_rank && root && root->thread_explicit)
			hmap_put(&im->thread_rank, utid, (uint32_t)t->rank);
	} else if (t->kind == PT_PROCESS) {
		uint32_t upid = desc_upid(im, t);
		if (t->has_rank && root && root->process_explicit)
			hmap_put(&im->process_rank, upid, (uint32_t)t->rank);
		tp_process_set_name(tp, upid, t->process_name);
		if (t->host_app && tp->t.process.arg_set_id[upid] == TP_NULL_U32) {
			uint32_t k = tp_intern_cstr(tp, "chrome.host_app_package_name");
			tp_args_begin(&im->args);
			tp_args_add_string(&im->args, k, k, t->host_app);
			tp->t.process.arg_set_id[upid] = tp_args_commit(tp, &im->args);
		}
	}
}

void tp_proto_thread_descriptor_parse(struct proto_importer *im, const uint8_t *p, size_t n)
{
	int64_t pid = -1, tid = -1;
	uint32_t name = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ThreadDescriptor_pid && f.wire == PB_WIRE_VARINT)
			pid = (int32_t)f.val;
		else if (f.id == PB_F_ThreadDescriptor_tid && f.wire == PB_WIRE_VARINT)
			tid = (int64_t)f.val;
		else if (f.id == PB_F_ThreadDescriptor_thread_name)
			name = str_field(im->tp, &f);
	}
	if (tid < 0)
		return;
	uint32_t utid = tp_thread_for_tid(im->tp, tid, pid > 0 ? pid : -1);
	tp_thread_set_name(im->tp, utid, name);
}

void tp_proto_process_descriptor_parse(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct pb_field f = {0};
	if (pb_find_field(p, n, PB_F_ProcessDescriptor_pid, &f) != 1)
		return;
	uint32_t upid = tp_process_for_pid(im->tp, (int32_t)f.val);
	if (pb_find_field(p, n, PB_F_ProcessDescriptor_process_name, &f) == 1)
		tp_process_set_name(im->tp, upid, str_field(im->tp, &f));
}

/* Add key = rank to each row's arg set of `sets` (process or thread). */
static void rank_args(struct proto_importer *im, struct hmap *ranks, uint32_t *sets,
                      const char *key)
{
	struct tp *tp = im->tp;
	uint32_t k = tp_intern_cstr(tp, key);
	for (size_t i = hmap_next(ranks, 0); i != HMAP_END; i = hmap_next(ranks, i + 1)) {
		uint32_t row = (uint32_t)ranks->slots[i].key;
		tp_args_begin(&im->args);
		tp_args_add_int(&im->args, k, k, (int32_t)(uint32_t)ranks->slots[i].val);
		uint32_t add = tp_args_commit(tp, &im->args);
		sets[row] = sets[row] == TP_NULL_U32 ? add : tp_args_merge(tp, sets[row], add);
	}
}

void tp_proto_tracks_finish(struct proto_importer *im)
{
	rank_args(im, &im->process_rank, im->tp->t.process.arg_set_id, "process_sort_index_hint");
	rank_args(im, &im->thread_rank, im->tp->t.thread.arg_set_id, "thread_sort_index_hint");
}

void tp_proto_tracks_free(struct proto_importer *im)
{
	hmap_release(&im->process_rank);
	hmap_release(&im->thread_rank);
	vec_release(&im->tracks);
	hmap_release(&im->tracks_by_uuid);
	hmap_release(&im->desc_of_tid);
	hmap_release(&im->desc_of_pid);
	hmap_release(&im->first_packet_seqs);
}
