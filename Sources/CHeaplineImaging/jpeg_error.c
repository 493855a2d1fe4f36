// libjpeg's default error_exit prints and calls exit(): a bad file would end the program. This
// one records the message and longjmps back to the C function that made the libjpeg call.
// Warnings about corrupt data are errors here too: libjpeg-turbo pads a truncated file with a
// fake end marker and warns, and a decoder that returned that grey remainder as an image would
// hide the damage.
#include <string.h>

#include <jerror.h>

#include "heapline_imaging.h"
#include "jpeg_error.h"

static void fail(j_common_ptr cinfo, int code) {
  struct hli_jpeg_error *err = (struct hli_jpeg_error *)cinfo->err;
  err->code = code;
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

static void error_exit(j_common_ptr cinfo) {
  int code = HLI_CORRUPT;
  if (cinfo->err->msg_code == JERR_OUT_OF_MEMORY) code = HLI_NO_MEMORY;
  if (cinfo->err->msg_code == JERR_INPUT_EOF) code = HLI_TRUNCATED;
  if (cinfo->err->msg_code == JERR_CONVERSION_NOTIMPL) code = HLI_UNSUPPORTED;
  fail(cinfo, code);
}

// Level -1 is a warning (corrupt data); levels 0 and up are trace messages, which are dropped.
static void emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  fail(cinfo, cinfo->err->msg_code == JWRN_JPEG_EOF ? HLI_TRUNCATED : HLI_CORRUPT);
}

static void output_message(j_common_ptr cinfo) { (void)cinfo; }

struct jpeg_error_mgr *hli_jpeg_error_init(struct hli_jpeg_error *err) {
  memset(err, 0, sizeof *err);
  jpeg_std_error(&err->pub);
  err->pub.error_exit = error_exit;
  err->pub.emit_message = emit_message;
  err->pub.output_message = output_message;
  return &err->pub;
}
