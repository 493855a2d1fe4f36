// libjpeg's error manager, made to longjmp instead of exit(). Shared by the decoder and the
// encoder; internal to this target.
#ifndef HLI_JPEG_ERROR_H
#define HLI_JPEG_ERROR_H

#include <setjmp.h>
#include <stdio.h>

#include <jpeglib.h>

struct hli_jpeg_error {
  struct jpeg_error_mgr pub;
  jmp_buf jump;  // set by the function making the current libjpeg call
  int code;
  char message[JMSG_LENGTH_MAX];
};

// Installs the manager on `cinfo` (before jpeg_create_*).
struct jpeg_error_mgr *hli_jpeg_error_init(struct hli_jpeg_error *err);

#endif
