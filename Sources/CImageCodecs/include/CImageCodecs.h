#ifndef LEDE_IMAGE_CODECS_H
#define LEDE_IMAGE_CODECS_H
#include <stddef.h>
#include <stdint.h>

// libjpeg(-turbo) reports errors by calling error_exit, which must not return: these wrappers catch it with setjmp in C
// (Swift cannot), so a truncated or hostile JPEG is an error code, never an exit or a jump through Swift frames.

// The size of a JPEG from its header alone (nothing decoded). 0 on success.
int lede_jpeg_size(const uint8_t *data, size_t length, int *width, int *height);

// Decodes a JPEG to 8-bit RGB into `out` (capacity `out_capacity` bytes), refusing one of more than `max_pixels`
// before decoding anything. 0 on success; width and height set.
int lede_jpeg_decode_rgb(const uint8_t *data, size_t length, uint64_t max_pixels, uint8_t *out, size_t out_capacity,
                         int *width, int *height);

// Encodes 8-bit RGB as a baseline JPEG of `quality` (1-100). On success 0, `*out` malloc'd (free with lede_free),
// `*out_length` its size.
int lede_jpeg_encode_rgb(const uint8_t *rgb, int width, int height, int quality, uint8_t **out, unsigned long *out_length);

void lede_free(void *p);

#endif
