/* SINGA's image records (image_record.c): v0.1's Record { type = 1; image = 5 } wrapping a
 * SingleLabelImageRecord, and v0.3's RecordProto, which is that same message without the
 * wrapper: { repeated int32 shape = 1; int32 label = 2; bytes pixel = 3; repeated float data = 4 }. */
#ifndef SINGA_LAYERS_IMAGE_RECORD_H
#define SINGA_LAYERS_IMAGE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pbread.h"

#define SINGA_RECORD_MAXDIM 8

typedef struct singa_image_record {
    int ndim, shape[SINGA_RECORD_MAXDIM];
    int32_t label; /* 0 when absent, as protobuf's default */
    const uint8_t *pixel; /* npixel bytes, or NULL */
    size_t npixel, ndata;
    singa_pb msg; /* the image message, for singa_image_record_values */
} singa_image_record;

/* Decodes the message at p (len bytes, at offset base of its file), a Record or a RecordProto;
 * a record that does not parse, has both or neither of `pixel` and `data`, or whose shape does not
 * hold its values is an error naming the byte offset. */
int singa_image_record_decode(singa_image_record *r, const uint8_t *p, size_t len, size_t base, singa_err *err);
/* How many values the record holds. */
size_t singa_image_record_size(const singa_image_record *r);
/* Its values as floats: the pixel bytes (0..255), else the data. */
void singa_image_record_values(const singa_image_record *r, float *out);
/* "3x32x32" into buf. */
const char *singa_image_record_shape_str(const singa_image_record *r, char *buf, size_t cap);

#endif
