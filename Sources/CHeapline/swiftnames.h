// What swifttypes.c and swiftnames.c share: reads that a bad pointer cannot crash, and the
// SWIFT_TYPE record that names a class offline (TraceFormat.md).
#ifndef HEAPLINE_SWIFTNAMES_H
#define HEAPLINE_SWIFTNAMES_H

#include <stddef.h>
#include <stdint.h>

struct hl_buffer;

enum { HL_TAG_SWIFT_TYPE = 9 };

// Copies n bytes from addr; 0 when any of them is not mapped readable (procmaps.c: the kernel
// checks, so a stray word cannot crash us).
int hl_safe_read(uintptr_t addr, void *out, size_t n);

// Writes a SWIFT_TYPE record for `category`: the class's descriptor chain and generic
// arguments, read as plain memory. Never calls the Swift runtime.
void hl_swift_emit_type(struct hl_buffer *b, uint32_t category, uintptr_t metadata);

#endif
