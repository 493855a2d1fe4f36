// JPEG encoding from RGBA8 rows into memory, for the slideshow's test images and for tests.
#include <stdlib.h>

#include "heapline_imaging.h"
#include "jpeg_error.h"

struct hli_jpeg_encoder {
  struct jpeg_compress_struct cinfo;
  struct hli_jpeg_error err;
  int created;
  unsigned char *buffer;  // jpeg_mem_dest's, grown by libjpeg with malloc
  unsigned long size;
};

hli_jpeg_encoder *hli_jpeg_encoder_create(void) {
  hli_jpeg_encoder *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->cinfo.err = hli_jpeg_error_init(&e->err);
  if (setjmp(e->err.jump)) return e;
  jpeg_create_compress(&e->cinfo);
  e->created = 1;
  return e;
}

int hli_jpeg_encoder_start(hli_jpeg_encoder *e, uint32_t width, uint32_t height, int quality) {
  if (!e->created || e->err.code) return e->err.code ? e->err.code : HLI_NO_MEMORY;
  if (setjmp(e->err.jump)) return e->err.code;
  jpeg_mem_dest(&e->cinfo, &e->buffer, &e->size);
  e->cinfo.image_width = width;
  e->cinfo.image_height = height;
  e->cinfo.input_components = 4;
  e->cinfo.in_color_space = JCS_EXT_RGBA;
  jpeg_set_defaults(&e->cinfo);
  jpeg_set_quality(&e->cinfo, quality, TRUE);
  jpeg_start_compress(&e->cinfo, TRUE);
  return HLI_OK;
}

int hli_jpeg_encoder_write_rows(hli_jpeg_encoder *e, const uint8_t *rows, size_t stride,
                                uint32_t count) {
  if (setjmp(e->err.jump)) return e->err.code;
  for (uint32_t i = 0; i < count; i++) {
    JSAMPROW row = (JSAMPROW)(rows + i * stride);
    jpeg_write_scanlines(&e->cinfo, &row, 1);  // a memory destination never suspends
  }
  return HLI_OK;
}

int hli_jpeg_encoder_finish(hli_jpeg_encoder *e, uint8_t **data, size_t *size) {
  if (setjmp(e->err.jump)) return e->err.code;
  jpeg_finish_compress(&e->cinfo);
  *data = e->buffer;
  *size = e->size;
  e->buffer = NULL;  // the caller's now
  return HLI_OK;
}

const char *hli_jpeg_encoder_message(const hli_jpeg_encoder *e) { return e->err.message; }

void hli_jpeg_encoder_destroy(hli_jpeg_encoder *e) {
  if (!e) return;
  if (e->created) jpeg_destroy_compress(&e->cinfo);
  free(e->buffer);
  free(e);
}
