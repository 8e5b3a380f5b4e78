#include "CImageCodecs.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct lede_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
};

static void lede_jpeg_error_exit(j_common_ptr cinfo) {
    struct lede_jpeg_error *e = (struct lede_jpeg_error *)cinfo->err;
    longjmp(e->jump, 1);
}

// Warnings (a corrupt segment libjpeg can skip) are errors here: a lead image that is not clean is refused.
static void lede_jpeg_emit(j_common_ptr cinfo, int level) {
    if (level < 0) {
        struct lede_jpeg_error *e = (struct lede_jpeg_error *)cinfo->err;
        longjmp(e->jump, 1);
    }
}

static void lede_jpeg_silent(j_common_ptr cinfo) { (void)cinfo; }

static void lede_jpeg_errors(struct jpeg_decompress_struct *cinfo, struct lede_jpeg_error *err) {
    cinfo->err = jpeg_std_error(&err->base);
    err->base.error_exit = lede_jpeg_error_exit;
    err->base.emit_message = lede_jpeg_emit;
    err->base.output_message = lede_jpeg_silent;
}

// A decompressor reading `data` up to its header; false when the header is not one. Called after the caller's setjmp:
// libjpeg's errors jump back there.
static int lede_jpeg_open(struct jpeg_decompress_struct *cinfo, const uint8_t *data, size_t length) {
    jpeg_create_decompress(cinfo);
    jpeg_mem_src(cinfo, data, (unsigned long)length);
    return jpeg_read_header(cinfo, TRUE) == JPEG_HEADER_OK;
}

int lede_jpeg_size(const uint8_t *data, size_t length, int *width, int *height) {
    struct jpeg_decompress_struct cinfo;
    struct lede_jpeg_error err;
    lede_jpeg_errors(&cinfo, &err);
    if (setjmp(err.jump)) { jpeg_destroy_decompress(&cinfo); return 1; }
    if (!lede_jpeg_open(&cinfo, data, length)) { jpeg_destroy_decompress(&cinfo); return 1; }
    *width = (int)cinfo.image_width;
    *height = (int)cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

int lede_jpeg_decode_rgb(const uint8_t *data, size_t length, uint64_t max_pixels, uint8_t *out, size_t out_capacity,
                         int *width, int *height) {
    struct jpeg_decompress_struct cinfo;
    struct lede_jpeg_error err;
    lede_jpeg_errors(&cinfo, &err);
    if (setjmp(err.jump)) { jpeg_destroy_decompress(&cinfo); return 1; }
    if (!lede_jpeg_open(&cinfo, data, length)) { jpeg_destroy_decompress(&cinfo); return 1; }
    uint64_t pixels = (uint64_t)cinfo.image_width * (uint64_t)cinfo.image_height;
    if (pixels == 0 || pixels > max_pixels) { jpeg_destroy_decompress(&cinfo); return 2; }
    cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_components != 3 || (uint64_t)cinfo.output_width * cinfo.output_height * 3 > out_capacity) {
        jpeg_destroy_decompress(&cinfo);
        return 2;
    }
    size_t stride = (size_t)cinfo.output_width * 3;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = out + (size_t)cinfo.output_scanline * stride;
        if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) { jpeg_destroy_decompress(&cinfo); return 1; }
    }
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

int lede_jpeg_encode_rgb(const uint8_t *rgb, int width, int height, int quality, uint8_t **out, unsigned long *out_length) {
    struct jpeg_compress_struct cinfo;
    struct lede_jpeg_error err;
    cinfo.err = jpeg_std_error(&err.base);
    err.base.error_exit = lede_jpeg_error_exit;
    err.base.output_message = lede_jpeg_silent;
    // The output's pointer and size live on the heap: a local changed after setjmp is indeterminate after longjmp.
    struct { unsigned char *buffer; unsigned long size; } *dest = calloc(1, sizeof *dest);
    if (dest == NULL) return 1;
    if (setjmp(err.jump)) { jpeg_destroy_compress(&cinfo); free(dest->buffer); free(dest); return 1; }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &dest->buffer, &dest->size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    size_t stride = (size_t)width * 3;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)cinfo.next_scanline * stride);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = dest->buffer;
    *out_length = dest->size;
    free(dest);
    return 0;
}

void lede_free(void *p) { free(p); }
