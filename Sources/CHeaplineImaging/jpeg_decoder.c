// JPEG decoding with libjpeg-turbo, one step per call. Each function that calls into libjpeg
// sets the error manager's jump first, so an error returns from that function with its code.
#include <stdlib.h>
#include <string.h>

#include "heapline_imaging.h"
#include "jpeg_error.h"

struct hli_jpeg_decoder {
  struct jpeg_decompress_struct cinfo;
  struct hli_jpeg_error err;
  int created;
};

hli_jpeg_decoder *hli_jpeg_decoder_create(const uint8_t *data, size_t size) {
  hli_jpeg_decoder *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->cinfo.err = hli_jpeg_error_init(&d->err);
  if (setjmp(d->err.jump)) return d;  // out of memory: the first call reports it
  jpeg_create_decompress(&d->cinfo);
  d->created = 1;
  jpeg_mem_src(&d->cinfo, data, (unsigned long)size);
  return d;
}

int hli_jpeg_read_header(hli_jpeg_decoder *d, uint32_t *width, uint32_t *height) {
  // An error in create (no memory, or empty input) is reported by the first step.
  if (!d->created || d->err.code) return d->err.code ? d->err.code : HLI_NO_MEMORY;
  if (setjmp(d->err.jump)) return d->err.code;
  jpeg_read_header(&d->cinfo, TRUE);
  // libjpeg-turbo converts YCbCr, RGB and greyscale to RGBA, not CMYK or YCCK.
  if (d->cinfo.jpeg_color_space == JCS_CMYK || d->cinfo.jpeg_color_space == JCS_YCCK) {
    strcpy(d->err.message, "CMYK JPEG images are not supported");
    return HLI_UNSUPPORTED;
  }
  *width = d->cinfo.image_width;
  *height = d->cinfo.image_height;
  return HLI_OK;
}

int hli_jpeg_start(hli_jpeg_decoder *d, unsigned scale_denom, uint32_t *width,
                   uint32_t *height) {
  if (setjmp(d->err.jump)) return d->err.code;
  d->cinfo.out_color_space = JCS_EXT_RGBA;
  d->cinfo.scale_num = 1;
  d->cinfo.scale_denom = scale_denom;
  jpeg_start_decompress(&d->cinfo);
  *width = d->cinfo.output_width;
  *height = d->cinfo.output_height;
  return HLI_OK;
}

int hli_jpeg_read_rows(hli_jpeg_decoder *d, uint8_t *rows, size_t stride, uint32_t count,
                       uint32_t *read) {
  enum { MAX_ROWS = 16 };
  JSAMPROW pointers[MAX_ROWS];
  if (count > MAX_ROWS) count = MAX_ROWS;
  for (uint32_t i = 0; i < count; i++) pointers[i] = rows + i * stride;
  *read = 0;
  if (setjmp(d->err.jump)) return d->err.code;
  *read = jpeg_read_scanlines(&d->cinfo, pointers, count);
  return HLI_OK;
}

int hli_jpeg_finish(hli_jpeg_decoder *d) {
  if (setjmp(d->err.jump)) return d->err.code;
  jpeg_finish_decompress(&d->cinfo);
  return HLI_OK;
}

const char *hli_jpeg_decoder_message(const hli_jpeg_decoder *d) { return d->err.message; }

// jpeg_destroy frees every pool libjpeg allocated, whatever state an error left it in.
void hli_jpeg_decoder_destroy(hli_jpeg_decoder *d) {
  if (!d) return;
  if (d->created) jpeg_destroy_decompress(&d->cinfo);
  free(d);
}

void hli_free(void *p) { free(p); }
