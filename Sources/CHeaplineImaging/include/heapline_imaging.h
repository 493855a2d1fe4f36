// The C side of HeaplineImaging: libjpeg and libpng, one step per call.
//
// Both libraries report errors by longjmp. A longjmp across Swift frames skips their cleanup
// (and is undefined behaviour), so every call that may longjmp is made here, from a function
// that called setjmp itself; the Swift side sees only a result code. After an error the
// decoder or encoder may only be destroyed, which frees everything the library allocated.
#ifndef HEAPLINE_IMAGING_H
#define HEAPLINE_IMAGING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Result codes. The message of the last error is kept with the decoder or encoder.
enum {
  HLI_OK = 0,
  HLI_CORRUPT = 1,      // the data is not a valid image of the format
  HLI_TRUNCATED = 2,    // the data ends before the image does
  HLI_UNSUPPORTED = 3,  // valid, but a kind this code does not decode (CMYK JPEG)
  HLI_NO_MEMORY = 4,
};

// JPEG decoding (libjpeg-turbo): create, read_header, start, read_rows until all are read,
// finish, destroy. Output is RGBA8, scaled by 1/scale_denom (1, 2, 4 or 8) in the DCT.
typedef struct hli_jpeg_decoder hli_jpeg_decoder;
hli_jpeg_decoder *hli_jpeg_decoder_create(const uint8_t *data, size_t size);
int hli_jpeg_read_header(hli_jpeg_decoder *d, uint32_t *width, uint32_t *height);
int hli_jpeg_start(hli_jpeg_decoder *d, unsigned scale_denom, uint32_t *width,
                   uint32_t *height);
int hli_jpeg_read_rows(hli_jpeg_decoder *d, uint8_t *rows, size_t stride, uint32_t count,
                       uint32_t *read);
int hli_jpeg_finish(hli_jpeg_decoder *d);
const char *hli_jpeg_decoder_message(const hli_jpeg_decoder *d);
void hli_jpeg_decoder_destroy(hli_jpeg_decoder *d);

// JPEG encoding from RGBA8 rows into memory. `finish` hands over the file, which the caller
// frees with hli_free.
typedef struct hli_jpeg_encoder hli_jpeg_encoder;
hli_jpeg_encoder *hli_jpeg_encoder_create(void);
int hli_jpeg_encoder_start(hli_jpeg_encoder *e, uint32_t width, uint32_t height, int quality);
int hli_jpeg_encoder_write_rows(hli_jpeg_encoder *e, const uint8_t *rows, size_t stride,
                                uint32_t count);
int hli_jpeg_encoder_finish(hli_jpeg_encoder *e, uint8_t **data, size_t *size);
const char *hli_jpeg_encoder_message(const hli_jpeg_encoder *e);
void hli_jpeg_encoder_destroy(hli_jpeg_encoder *e);

// PNG decoding (libpng): create, read_header, then read_row for each row (or read_image for an
// interlaced image, which needs every row at once), finish, destroy. Output is RGBA8.
typedef struct hli_png_decoder hli_png_decoder;
hli_png_decoder *hli_png_decoder_create(const uint8_t *data, size_t size);
int hli_png_read_header(hli_png_decoder *d, uint32_t *width, uint32_t *height,
                        int *interlaced);
int hli_png_read_row(hli_png_decoder *d, uint8_t *row);
int hli_png_read_image(hli_png_decoder *d, uint8_t *pixels, size_t stride);
int hli_png_finish(hli_png_decoder *d);
const char *hli_png_decoder_message(const hli_png_decoder *d);
void hli_png_decoder_destroy(hli_png_decoder *d);

// PNG encoding of RGBA8 pixels into memory, which the caller frees with hli_free. `message`
// (at least 200 bytes) receives the error message.
int hli_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                   int interlaced, uint8_t **data, size_t *size, char *message);

void hli_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
