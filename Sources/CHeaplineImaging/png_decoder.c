// PNG decoding with libpng, one step per call, from memory. libpng's error callback records the
// message and longjmps to the jmp_buf that the current wrapper set.
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "heapline_imaging.h"

struct hli_png_decoder {
  png_structp png;
  png_infop info;
  const uint8_t *data;
  size_t size, offset;
  int code;
  char message[200];
};

static void on_error(png_structp png, png_const_charp message) {
  hli_png_decoder *d = png_get_error_ptr(png);
  if (!d->code) d->code = HLI_CORRUPT;
  strncpy(d->message, message ? message : "libpng error", sizeof d->message - 1);
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
  (void)png;
  (void)message;  // benign (a bad ancillary chunk, say): the image itself is fine
}

static void read_data(png_structp png, png_bytep out, size_t length) {
  hli_png_decoder *d = png_get_io_ptr(png);
  if (length > d->size - d->offset) {
    d->code = HLI_TRUNCATED;
    png_error(png, "the PNG data ends before the image does");
  }
  memcpy(out, d->data + d->offset, length);
  d->offset += length;
}

hli_png_decoder *hli_png_decoder_create(const uint8_t *data, size_t size) {
  hli_png_decoder *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->data = data;
  d->size = size;
  d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, on_error, on_warning);
  if (d->png) d->info = png_create_info_struct(d->png);
  if (d->png) png_set_read_fn(d->png, d, read_data);
  return d;
}

// Sets libpng's transforms so that every row comes out as 8-bit RGBA.
int hli_png_read_header(hli_png_decoder *d, uint32_t *width, uint32_t *height,
                        int *interlaced) {
  if (!d->png || !d->info) return HLI_NO_MEMORY;
  if (setjmp(png_jmpbuf(d->png))) return d->code;
  png_read_info(d->png, d->info);
  png_uint_32 w, h;
  int depth, color, interlace;
  png_get_IHDR(d->png, d->info, &w, &h, &depth, &color, &interlace, NULL, NULL);
  png_set_expand(d->png);  // palette to RGB, low bit depths to 8, tRNS to alpha
  png_set_strip_16(d->png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
    png_set_gray_to_rgb(d->png);
  if (!(color & PNG_COLOR_MASK_ALPHA) && !png_get_valid(d->png, d->info, PNG_INFO_tRNS))
    png_set_add_alpha(d->png, 0xFF, PNG_FILLER_AFTER);
  if (interlace != PNG_INTERLACE_NONE) png_set_interlace_handling(d->png);
  png_read_update_info(d->png, d->info);
  if (png_get_rowbytes(d->png, d->info) != (size_t)w * 4) {
    strcpy(d->message, "unexpected row layout after conversion to RGBA");
    return HLI_UNSUPPORTED;
  }
  *width = w;
  *height = h;
  *interlaced = interlace != PNG_INTERLACE_NONE;
  return HLI_OK;
}

int hli_png_read_row(hli_png_decoder *d, uint8_t *row) {
  if (setjmp(png_jmpbuf(d->png))) return d->code;
  png_read_row(d->png, row, NULL);
  return HLI_OK;
}

// An interlaced image fills in every row on each of its seven passes, so it needs them all.
int hli_png_read_image(hli_png_decoder *d, uint8_t *pixels, size_t stride) {
  png_uint_32 height = png_get_image_height(d->png, d->info);
  png_bytepp rows = malloc(height * sizeof *rows);
  if (!rows) return HLI_NO_MEMORY;
  for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + y * stride;
  if (setjmp(png_jmpbuf(d->png))) {
    free(rows);
    return d->code;
  }
  png_read_image(d->png, rows);
  free(rows);
  return HLI_OK;
}

int hli_png_finish(hli_png_decoder *d) {
  if (setjmp(png_jmpbuf(d->png))) return d->code;
  png_read_end(d->png, NULL);
  return HLI_OK;
}

const char *hli_png_decoder_message(const hli_png_decoder *d) { return d->message; }

void hli_png_decoder_destroy(hli_png_decoder *d) {
  if (!d) return;
  if (d->png) png_destroy_read_struct(&d->png, d->info ? &d->info : NULL, NULL);
  free(d);
}
