// PNG encoding of RGBA8 pixels into a growing buffer, for tests and the slideshow.
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "heapline_imaging.h"

struct hli_png_output {
  uint8_t *data;
  size_t size, capacity;
  char *message;
  int failed;
};

static void on_error(png_structp png, png_const_charp message) {
  struct hli_png_output *out = png_get_error_ptr(png);
  strncpy(out->message, message ? message : "libpng error", 199);
  out->message[199] = 0;
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
  (void)png;
  (void)message;
}

static void write_data(png_structp png, png_bytep bytes, size_t length) {
  struct hli_png_output *out = png_get_io_ptr(png);
  if (out->size + length > out->capacity) {
    size_t capacity = out->capacity ? out->capacity * 2 : 64 * 1024;
    while (capacity < out->size + length) capacity *= 2;
    uint8_t *grown = realloc(out->data, capacity);
    if (!grown) {
      out->failed = 1;
      png_error(png, "out of memory");
    }
    out->data = grown;
    out->capacity = capacity;
  }
  memcpy(out->data + out->size, bytes, length);
  out->size += length;
}

static void flush_data(png_structp png) { (void)png; }

int hli_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                   int interlaced, uint8_t **data, size_t *size, char *message) {
  struct hli_png_output out = {.message = message};
  message[0] = 0;
  png_bytepp rows = malloc((height ? height : 1) * sizeof *rows);
  png_structp png = rows ? png_create_write_struct(PNG_LIBPNG_VER_STRING, &out, on_error,
                                                   on_warning)
                         : NULL;
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    if (png) png_destroy_write_struct(&png, NULL);
    free(rows);
    return HLI_NO_MEMORY;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(out.data);
    return out.failed ? HLI_NO_MEMORY : HLI_CORRUPT;
  }
  for (uint32_t y = 0; y < height; y++) rows[y] = (png_bytep)(pixels + y * stride);
  png_set_write_fn(png, &out, write_data, flush_data);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB_ALPHA,
               interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  free(rows);
  *data = out.data;
  *size = out.size;
  return HLI_OK;
}
