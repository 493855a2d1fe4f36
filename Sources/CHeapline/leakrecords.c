// A leak scan's results in the trace (TraceFormat.md): one LEAK_SCAN record, then a LEAK_BLOCK
// for each block the scan could not reach or reached only through an interior pointer, then a
// LEAK_EDGE for each pointer between two of those blocks, all in the scanning thread's buffer,
// which the scan fills record by record (leakctl.c).
// None is timed: LEAK_SCAN carries its own time, so that the records decode without the chunk's
// time deltas, and a scan's records may span several chunks of that thread. The caller flushes
// the buffer afterwards.
//
// With --graph, a LEAK_GRAPH record follows (how many roots and nodes come), then a LEAK_ROOT
// for each root region scanned and a LEAK_NODE for each block the scan reached, breadth first,
// with its parent (a node written before it, or a root) and the pointer's offset there.
#include "leakscan.h"

// A block as LEAK_BLOCK and LEAK_NODE both carry it: its alloc id, address, size, stack and
// category (its size class when it has none of its own).
static void put_block(struct hl_buffer *b, const struct hl_leak_block *k) {
  hl_put_varint(b, k->serial);
  hl_put_varint(b, k->counter);
  hl_put_varint(b, k->addr);
  hl_put_varint(b, k->size);
  hl_put_varint(b, k->stack);
  hl_put_varint(b, k->category ? k->category : hl_size_class(k->size));
}

void hl_emit_leak_scan(struct hl_buffer *b, const struct hl_leak_scan_info *info, uint32_t count,
                       size_t edge_count) {
  // The scan starts a chunk of its own: the reader decodes a chunk's records lazily, up to its
  // next timed one, and opens the chunks that follow by time; in chunks of untimed records
  // only, the scan's records are read in the order written.
  hl_buffer_flush(b);
  hl_ensure(b, 2 + 2 + 13 * 10);
  hl_put_u8(b, HL_TAG_LEAK_SCAN);
  hl_put_varint(b, info->id);
  hl_put_varint(b, info->time);
  hl_put_u8(b, (uint8_t)info->trigger);
  hl_put_u8(b, (uint8_t)info->flags);
  hl_put_varint(b, info->threads_stopped);
  hl_put_varint(b, info->threads_unresponsive);
  hl_put_varint(b, info->live_blocks);
  hl_put_varint(b, info->live_bytes);
  hl_put_varint(b, info->root_bytes);
  hl_put_varint(b, info->stop_ns);
  hl_put_varint(b, info->total_ns);
  hl_put_varint(b, count);
  hl_put_varint(b, edge_count);
  hl_commit_record(b);
}

// A scan that could not run, so that `heapline leaks` says why the trace holds none.
void hl_emit_leak_failed(struct hl_buffer *b, uint64_t time, int trigger, int err) {
  hl_ensure(b, 2 + 3 * 10);
  hl_put_u8(b, HL_TAG_LEAK_FAILED);
  hl_put_varint(b, time);
  hl_put_u8(b, (uint8_t)trigger);
  hl_put_varint(b, (uint64_t)err);
  hl_commit_record(b);
}

void hl_emit_leak_block(struct hl_buffer *b, uint32_t scan, const struct hl_leak_block *k) {
  hl_ensure(b, 2 + 7 * 10);
  hl_put_u8(b, HL_TAG_LEAK_BLOCK);
  hl_put_varint(b, scan);
  hl_put_u8(b, (uint8_t)k->kind);
  put_block(b, k);
  hl_commit_record(b);
}

void hl_emit_leak_edge(struct hl_buffer *b, uint32_t scan, uint32_t from, uint32_t to,
                       uint32_t flags) {
  hl_ensure(b, 2 + 3 * 10);
  hl_put_u8(b, HL_TAG_LEAK_EDGE);
  hl_put_varint(b, scan);
  hl_put_varint(b, from);
  hl_put_varint(b, to);
  hl_put_u8(b, (uint8_t)flags);
  hl_commit_record(b);
}

void hl_emit_leak_graph(struct hl_buffer *b, uint32_t scan, const struct hl_graph_result *r) {
  hl_ensure(b, 1 + 3 * 10);
  hl_put_u8(b, HL_TAG_LEAK_GRAPH);
  hl_put_varint(b, scan);
  hl_put_varint(b, r->root_count);
  hl_put_varint(b, r->node_count);
  hl_commit_record(b);
  for (uint32_t i = 0; i < r->root_count; i++) {
    const struct hl_graph_root *root = &r->roots[i];
    hl_ensure(b, 2 + 4 * 10);
    hl_put_u8(b, HL_TAG_LEAK_ROOT);
    hl_put_varint(b, scan);
    hl_put_u8(b, (uint8_t)root->kind);
    hl_put_varint(b, (uint32_t)root->tid);
    hl_put_varint(b, root->lo);
    hl_put_varint(b, root->hi);
    hl_commit_record(b);
  }
  for (uint32_t i = 0; i < r->node_count; i++) {
    const struct hl_graph_node *n = &r->nodes[i];
    const struct hl_leak_block *k = &n->block;
    hl_ensure(b, 1 + 9 * 10);
    hl_put_u8(b, HL_TAG_LEAK_NODE);
    hl_put_varint(b, scan);
    put_block(b, k);
    hl_put_varint(b, n->parent);
    hl_put_varint(b, n->offset);
    hl_commit_record(b);
  }
}
