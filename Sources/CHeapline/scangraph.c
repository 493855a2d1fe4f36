// The reachability graph of a leak scan, kept with --graph (HEAPLINE_LEAKS_GRAPH=1) for
// `heapline retainers`: for each block phase 0 reached, the block or root that reached it first
// in a breadth-first flood from every root, and where in that holder the pointer lies. That is
// a shortest path from the roots to every live block, for a word per block and a root table.
// Its memory comes from mmap, as the scan's does (leakscan.h says why).
#include <string.h>

#include "leakscan.h"

int hl_graph_begin(struct hl_scan *s) {
  uint32_t n = s->ix.count ? s->ix.count : 1;
  struct hl_graph *g = hl_map(sizeof *g);
  if (!g) return 1;
  g->parent = hl_scan_map(n * sizeof *g->parent);
  g->offset = hl_scan_map(n * sizeof *g->offset);
  g->order = hl_scan_map(n * sizeof *g->order);
  hl_vec_init(&g->roots, sizeof(struct hl_graph_root));
  s->graph = g;
  if (!g->parent || !g->offset || !g->order) return 1;
  memset(g->parent, 0xFF, n * sizeof *g->parent);  // HL_PARENT_NONE
  return 0;
}

void hl_graph_end(struct hl_scan *s) {
  struct hl_graph *g = s->graph;
  if (!g) return;
  uint32_t n = s->ix.count ? s->ix.count : 1;
  hl_unmap(g->parent, n * sizeof *g->parent);
  hl_unmap(g->offset, n * sizeof *g->offset);
  hl_unmap(g->order, n * sizeof *g->order);
  hl_vec_free(&g->roots);
  hl_unmap(g, sizeof *g);
  s->graph = NULL;
}

// A root region about to be scanned; `base` is subtracted from the addresses of its words
// (0, or where a copy of it lies minus where it lies).
void hl_graph_root(struct hl_scan *s, uintptr_t lo, uintptr_t hi, uintptr_t base) {
  struct hl_graph *g = s->graph;
  struct hl_graph_root *r = hl_vec_push(&g->roots);
  if (!r) {  // out of memory: what this region reaches has no known parent
    g->holder = HL_PARENT_NONE;
    return;
  }
  *r = (struct hl_graph_root){s->root_kind, s->root_tid, lo, hi};
  g->holder = HL_PARENT_ROOT | (uint32_t)(g->roots.len - 1);
  g->base = base;
}

// Copies the graph out of the scan and the live table while both hold still. A node's parent
// node always comes before it: breadth first, a block is reached from one already scanned.
int hl_graph_collect(struct hl_scan *s, struct hl_graph_result *r) {
  struct hl_graph *g = s->graph;
  size_t blocks = s->ix.count ? s->ix.count : 1;
  uint32_t *position = hl_scan_map(blocks * sizeof *position);
  r->node_capacity = g->reached ? g->reached : 1;
  r->nodes = hl_scan_map(r->node_capacity * sizeof *r->nodes);
  r->root_count = (uint32_t)g->roots.len;
  r->roots = hl_map((r->root_count ? r->root_count : 1) * sizeof *r->roots);
  int err = !position || !r->nodes || !r->roots;
  if (!err) {
    memset(position, 0xFF, blocks * sizeof *position);  // not written
    memcpy(r->roots, g->roots.data, g->roots.len * sizeof *r->roots);
  }
  for (uint32_t k = 0; !err && k < g->reached; k++) {
    uint32_t j = g->order[k], parent = g->parent[j];
    // Its root went unrecorded (out of memory), or so did its parent block's.
    if (parent == HL_PARENT_NONE) continue;
    if (!(parent & HL_PARENT_ROOT) && position[parent] == UINT32_MAX) continue;
    struct hl_block blk;
    hl_live_block_at(s->ix.blocks[j].ref, &blk);
    struct hl_graph_node *out = &r->nodes[r->node_count];
    *out = (struct hl_graph_node){
        .block = {.addr = blk.addr, .size = blk.size, .counter = blk.counter,
                  .serial = blk.serial, .stack = blk.stack, .category = blk.category},
        .parent = parent & HL_PARENT_ROOT ? 2ull * (parent & ~HL_PARENT_ROOT) + 1
                                          : 2ull * position[parent],
        .offset = g->offset[j]};
    hl_leak_block_words(&out->block);
    position[j] = r->node_count++;
  }
  if (position) hl_unmap(position, blocks * sizeof *position);
  return err;
}

void hl_graph_release(struct hl_graph_result *r) {
  if (r->nodes) hl_unmap(r->nodes, r->node_capacity * sizeof *r->nodes);
  if (r->roots) hl_unmap(r->roots, (r->root_count ? r->root_count : 1) * sizeof *r->roots);
  memset(r, 0, sizeof *r);
}
