// The unwind rule at a pc, compiled from its module's CFI. The module comes from the loader's
// _dl_find_object, which takes no lock and calls no malloc (glibc made it for unwinders that
// run in signal handlers), and whose answer names the module's PT_GNU_EH_FRAME segment. That
// segment's .eh_frame_hdr holds a table of (start pc, FDE) sorted by pc, searched here; the FDE
// and its CIE are read in place, in the module's mapped, read-only image.
//
// Only what the walk can follow is compiled (unwind.h): a CFA in rsp or rbp, the return address
// at CFA - 8, rbp saved on the stack or untouched. Anything else (a signal frame's 'S', a DWARF
// expression, a register saved in another register) gives no rule, and the stack goes to
// libunwind.
#include <dlfcn.h>
#include <string.h>

#include "unwind.h"

enum { DW_REG_RBX = 3, DW_REG_RBP = 6, DW_REG_RSP = 7, DW_REG_RA = 16 };
enum { RULE_SAME = 0, RULE_UNDEFINED, RULE_OFFSET, RULE_OTHER };

struct cfi_state {
  int64_t cfa_offset;
  uint8_t cfa_reg, cfa_other;  // cfa_other: an expression, which the walk cannot follow
  uint8_t rbp_rule, rbx_rule, ra_rule;
  int64_t rbp_offset, rbx_offset, ra_offset;
};

struct cursor {
  const uint8_t *p, *end;
  int bad;  // read past the end, or an encoding not understood
};

static uint64_t uleb(struct cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0; c->p < c->end; shift += 7) {
    uint8_t byte = *c->p++;
    if (shift < 64) v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return v;
  }
  c->bad = 1;
  return 0;
}

static int64_t sleb(struct cursor *c) {
  int64_t v = 0;
  unsigned shift = 0;
  while (c->p < c->end) {
    uint8_t byte = *c->p++;
    if (shift < 64) v |= (int64_t)((uint64_t)(byte & 0x7f) << shift);
    shift += 7;
    if (!(byte & 0x80)) {
      if (shift < 64 && (byte & 0x40)) v |= -((int64_t)1 << shift);
      return v;
    }
  }
  c->bad = 1;
  return 0;
}

static uint64_t fixed(struct cursor *c, unsigned bytes) {
  if ((size_t)(c->end - c->p) < bytes) {
    c->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  memcpy(&v, c->p, bytes);  // little-endian
  c->p += bytes;
  return v;
}

// A pointer in DWARF's exception-handling encoding (DW_EH_PE_*). `data` is the base of datarel.
static uint64_t encoded(struct cursor *c, uint8_t enc, uintptr_t data) {
  if (enc == 0xff) return 0;  // omitted
  uintptr_t at = (uintptr_t)c->p;
  uint64_t v;
  switch (enc & 0x0f) {
    case 0x00: v = fixed(c, 8); break;
    case 0x01: v = uleb(c); break;
    case 0x02: v = fixed(c, 2); break;
    case 0x03: v = fixed(c, 4); break;
    case 0x04: v = fixed(c, 8); break;
    case 0x09: v = (uint64_t)sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(c, 4); break;
    case 0x0c: v = fixed(c, 8); break;
    default: c->bad = 1; return 0;
  }
  switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += at; break;
    case 0x30: v += data; break;
    default: c->bad = 1; return 0;
  }
  if (enc & 0x80) c->bad = 1;  // indirect: never seen in .eh_frame_hdr or FDE ranges
  return v;
}

// The FDE whose range may hold `pc`, by binary search of .eh_frame_hdr's table.
static const uint8_t *find_fde(const uint8_t *hdr, uintptr_t pc) {
  if (hdr[0] != 1 || hdr[3] != 0x3b) return NULL;  // version 1, table of datarel sdata4 pairs
  struct cursor c = {hdr + 4, hdr + 4 + 16, 0};
  encoded(&c, hdr[1], (uintptr_t)hdr);
  uint64_t count = encoded(&c, hdr[2], (uintptr_t)hdr);
  if (c.bad || !count) return NULL;
  const int32_t *table = (const int32_t *)c.p;
  uint64_t lo = 0, hi = count;  // the answer is the last entry whose start is <= pc
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if ((uintptr_t)hdr + (intptr_t)table[2 * mid] <= pc) lo = mid;
    else hi = mid;
  }
  if ((uintptr_t)hdr + (intptr_t)table[2 * lo] > pc) return NULL;
  return hdr + table[2 * lo + 1];
}

// Runs a CFA program up to `pc`. Returns 0 on an instruction it cannot follow.
static int run(struct cursor *c, struct cfi_state *s, const struct cfi_state *initial,
               uint64_t code_align, int64_t data_align, uint8_t fde_enc, uintptr_t *loc,
               uintptr_t pc) {
  struct cfi_state saved[8];
  int depth = 0;
  while (c->p < c->end && !c->bad) {
    uint8_t op = *c->p++;
    uint64_t reg = op & 0x3f, delta = 0;
    int64_t off;
    switch (op >> 6) {
      case 1: delta = reg * code_align; goto advance;
      case 2: off = (int64_t)uleb(c) * data_align; goto offset;
      case 3: goto restore;
    }
    switch (op) {
      case 0x00: break;  // nop
      case 0x01: {
        uintptr_t to = (uintptr_t)encoded(c, fde_enc, 0);
        if (to > pc) return 1;
        *loc = to;
        break;
      }
      case 0x02: delta = fixed(c, 1) * code_align; goto advance;
      case 0x03: delta = fixed(c, 2) * code_align; goto advance;
      case 0x04: delta = fixed(c, 4) * code_align; goto advance;
      case 0x05: reg = uleb(c); off = (int64_t)uleb(c) * data_align; goto offset;
      case 0x06: reg = uleb(c); goto restore;
      case 0x07: case 0x08:  // undefined, same value
        reg = uleb(c);
        if (reg == DW_REG_RBP) s->rbp_rule = op == 0x07 ? RULE_UNDEFINED : RULE_SAME;
        if (reg == DW_REG_RBX) s->rbx_rule = op == 0x07 ? RULE_UNDEFINED : RULE_SAME;
        if (reg == DW_REG_RA) s->ra_rule = op == 0x07 ? RULE_UNDEFINED : RULE_SAME;
        break;
      case 0x09:  // register: the value is in another register
        reg = uleb(c);
        uleb(c);
        goto other;
      case 0x0a:
        if (depth == 8) return 0;
        saved[depth++] = *s;
        break;
      case 0x0b:  // restore_state: the CFA too, as GCC's code and libgcc's unwinder expect
        if (!depth) return 0;
        *s = saved[--depth];
        break;
      case 0x0c:
        s->cfa_reg = (uint8_t)uleb(c), s->cfa_offset = (int64_t)uleb(c), s->cfa_other = 0;
        break;
      case 0x0d: s->cfa_reg = (uint8_t)uleb(c); s->cfa_other = 0; break;
      case 0x0e: s->cfa_offset = (int64_t)uleb(c); break;
      case 0x0f: {  // def_cfa_expression
        uint64_t n = uleb(c);
        c->p += n;
        s->cfa_other = 1;
        break;
      }
      case 0x10: case 0x16: {  // expression, val_expression
        reg = uleb(c);
        uint64_t n = uleb(c);
        if (n > (uint64_t)(c->end - c->p)) return 0;
        c->p += n;
        goto other;
      }
      case 0x11: reg = uleb(c); off = sleb(c) * data_align; goto offset;
      case 0x12:
        s->cfa_reg = (uint8_t)uleb(c), s->cfa_offset = sleb(c) * data_align, s->cfa_other = 0;
        break;
      case 0x13: s->cfa_offset = sleb(c) * data_align; break;
      case 0x14: reg = uleb(c); uleb(c); goto other;  // val_offset
      case 0x15: reg = uleb(c); sleb(c); goto other;  // val_offset_sf
      case 0x2e: uleb(c); break;                      // GNU_args_size
      case 0x2f: reg = uleb(c); off = -(int64_t)uleb(c) * data_align; goto offset;
      default: return 0;
    }
    continue;
  advance:
    if (*loc + delta > pc) return 1;
    *loc += delta;
    continue;
  offset:
    if (reg == DW_REG_RBP) s->rbp_rule = RULE_OFFSET, s->rbp_offset = off;
    if (reg == DW_REG_RBX) s->rbx_rule = RULE_OFFSET, s->rbx_offset = off;
    if (reg == DW_REG_RA) s->ra_rule = RULE_OFFSET, s->ra_offset = off;
    continue;
  restore:
    if (reg == DW_REG_RBP) s->rbp_rule = initial->rbp_rule, s->rbp_offset = initial->rbp_offset;
    if (reg == DW_REG_RBX) s->rbx_rule = initial->rbx_rule, s->rbx_offset = initial->rbx_offset;
    if (reg == DW_REG_RA) s->ra_rule = initial->ra_rule, s->ra_offset = initial->ra_offset;
    continue;
  other:
    if (reg == DW_REG_RBP) s->rbp_rule = RULE_OTHER;
    if (reg == DW_REG_RBX) s->rbx_rule = RULE_OTHER;
    if (reg == DW_REG_RA) s->ra_rule = RULE_OTHER;
  }
  return !c->bad;
}

// A CIE's fields, up to its instructions.
struct cie {
  uint64_t code_align;
  int64_t data_align;
  uint8_t fde_enc, has_z;
  struct cursor program;
};

static int read_cie(const uint8_t *at, struct cie *out) {
  uint32_t len;
  memcpy(&len, at, 4);
  if (len == 0xffffffff || len < 8) return 0;
  struct cursor c = {at + 4, at + 4 + len, 0};
  if (fixed(&c, 4) != 0) return 0;  // a CIE's id is 0 in .eh_frame
  uint8_t version = (uint8_t)fixed(&c, 1);
  const char *aug = (const char *)c.p;
  size_t aug_len = strnlen(aug, (size_t)(c.end - c.p));
  c.p += aug_len + 1;
  out->code_align = uleb(&c);
  out->data_align = sleb(&c);
  uint64_t ra = version == 1 ? fixed(&c, 1) : uleb(&c);
  if (ra != DW_REG_RA) return 0;
  out->fde_enc = 0;
  out->has_z = aug[0] == 'z';
  if (out->has_z) {
    uint64_t n = uleb(&c);
    struct cursor data = {c.p, c.p + n, 0};
    for (size_t i = 1; i < aug_len; i++) {
      switch (aug[i]) {
        case 'R': out->fde_enc = (uint8_t)fixed(&data, 1); break;
        case 'L': fixed(&data, 1); break;
        case 'P': {
          uint8_t enc = (uint8_t)fixed(&data, 1);
          encoded(&data, enc & 0x7f, 0);  // the personality's address, not followed
          break;
        }
        default: return 0;  // 'S' (a signal frame) and anything newer
      }
    }
    if (data.bad) return 0;
    c.p += n;
  } else if (aug_len) {
    return 0;
  }
  out->program = c;
  return !c.bad;
}

// The frame pointer's rule (CFA = rbp + 16, rbp saved at CFA - 16), for code no CFI covers:
// node's worker threads, whose stacks pass through V8's code, went to libunwind for every
// allocation, which falls back to the same rule but checks each word it reads with a system
// call (mincore, a pipe's write) under a signal mask: 13 times untraced, 4 times heaptrack. The
// walk reads only the thread's stack, and a chain that leaves it still goes to libunwind.
static int frame_pointer_rule(struct hl_unwind_rule *rule) {
  *rule = (struct hl_unwind_rule){
      .cfa_offset = 16, .rbp_offset = -16,
      .flags = HL_RULE_KNOWN | HL_RULE_OK | HL_RULE_CFA_RBP | HL_RULE_RBP_SAVED};
  return 1;
}

int hl_ehframe_rule(uintptr_t pc, struct hl_unwind_rule *rule) {
  *rule = (struct hl_unwind_rule){.flags = HL_RULE_KNOWN};
  struct dl_find_object found;
  if (_dl_find_object((void *)pc, &found) != 0 || !found.dlfo_eh_frame)
    return frame_pointer_rule(rule);
  const uint8_t *fde = find_fde(found.dlfo_eh_frame, pc);
  if (!fde) return frame_pointer_rule(rule);
  uint32_t len, cie_pointer;
  memcpy(&len, fde, 4);
  if (len == 0xffffffff || len < 8) return 0;
  memcpy(&cie_pointer, fde + 4, 4);
  struct cie cie;
  if (!read_cie(fde + 4 - cie_pointer, &cie)) return 0;
  struct cursor c = {fde + 8, fde + 4 + len, 0};
  uintptr_t start = (uintptr_t)encoded(&c, cie.fde_enc, 0);
  uint64_t range = encoded(&c, cie.fde_enc & 0x0f, 0);
  if (c.bad) return 0;
  if (pc < start || pc - start >= range) return frame_pointer_rule(rule);  // between FDEs
  if (cie.has_z) c.p += uleb(&c);
  struct cfi_state initial = {0}, state;
  uintptr_t loc = start;
  if (!run(&cie.program, &initial, &initial, cie.code_align, cie.data_align, cie.fde_enc, &loc,
           (uintptr_t)-1))
    return 0;
  state = initial;
  loc = start;
  if (!run(&c, &state, &initial, cie.code_align, cie.data_align, cie.fde_enc, &loc, pc)) return 0;
  if (state.cfa_other ||
      (state.cfa_reg != DW_REG_RSP && state.cfa_reg != DW_REG_RBP && state.cfa_reg != DW_REG_RBX))
    return 0;
  if (state.cfa_offset < INT32_MIN || state.cfa_offset > INT32_MAX) return 0;
  if (state.rbp_rule == RULE_OTHER || state.rbp_rule == RULE_UNDEFINED) return 0;
  if (state.rbp_rule == RULE_OFFSET &&
      (state.rbp_offset < INT16_MIN || state.rbp_offset > INT16_MAX))
    return 0;
  rule->cfa_offset = (int32_t)state.cfa_offset;
  rule->flags |= state.cfa_reg == DW_REG_RBP ? HL_RULE_CFA_RBP : 0;
  rule->flags |= state.cfa_reg == DW_REG_RBX ? HL_RULE_CFA_RBX : 0;
  if (state.rbp_rule == RULE_OFFSET) {
    rule->flags |= HL_RULE_RBP_SAVED;
    rule->rbp_offset = (int16_t)state.rbp_offset;
  }
  // rbx only matters to a caller whose CFA is in rbx (glibc's lazy-binding trampoline realigns
  // the stack that way): a value the walk cannot follow is marked lost, not refused.
  if (state.rbx_rule == RULE_OFFSET && state.rbx_offset >= INT16_MIN &&
      state.rbx_offset <= INT16_MAX) {
    rule->flags |= HL_RULE_RBX_SAVED;
    rule->rbx_offset = (int16_t)state.rbx_offset;
  } else if (state.rbx_rule != RULE_SAME) {
    rule->flags |= HL_RULE_RBX_LOST;
  }
  if (state.ra_rule == RULE_UNDEFINED) rule->flags |= HL_RULE_LAST;
  else if (state.ra_rule != RULE_OFFSET || state.ra_offset != -8) return 0;
  rule->flags |= HL_RULE_OK;
  return 1;
}
