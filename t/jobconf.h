/* What the C tests of whole jobs share: a tiny IDX data set, and builders of their confs. */
#ifndef SINGA_T_JOBCONF_H
#define SINGA_T_JOBCONF_H

#include <stdio.h>

#include "singa/singa.h"

static inline void write_be32(FILE *f, unsigned v)
{
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
    fwrite(b, 1, 4, f);
}

/* dir/images and dir/labels: 64 images of 4x4 pixels in 4 classes, each class bright in its own
 * row. */
static inline void write_data(const char *dir)
{
    char path[2][512];
    snprintf(path[0], sizeof path[0], "%s/images", dir);
    snprintf(path[1], sizeof path[1], "%s/labels", dir);
    FILE *im = fopen(path[0], "wb"), *lb = fopen(path[1], "wb");
    if (!im || !lb) {
        if (im)
            fclose(im);
        if (lb)
            fclose(lb);
        return; /* the job that reads them says what is missing */
    }
    const unsigned head[] = {0x803, 64, 4, 4};
    for (int i = 0; i < 4; i++)
        write_be32(im, head[i]);
    write_be32(lb, 0x801);
    write_be32(lb, 64);
    for (int i = 0; i < 64; i++) {
        fputc(i % 4, lb);
        for (int p = 0; p < 16; p++)
            fputc(p / 4 == i % 4 ? 200 : (p * 37 + i * 11) % 60, im);
    }
    fclose(im);
    fclose(lb);
}

static inline singa_conf *str(const char *s) { return singa_conf_new_str(s); }
static inline singa_conf *num(double v) { return singa_conf_new_num(v); }

static inline singa_conf *layer(const char *name, const char *type, const char *src)
{
    singa_conf *l = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf_add(l, "name", str(name));
    singa_conf_add(l, "type", str(type));
    if (src)
        singa_conf_add(l, "srclayer", str(src));
    return l;
}

/* An updater of `type` with momentum 0.9 and the fixed rate lr. */
static inline singa_conf *fixed_updater(const char *type, double lr)
{
    singa_conf *u = singa_conf_new(SINGA_CONF_TABLE), *rate = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf_add(rate, "type", str("kFixed"));
    singa_conf_add(rate, "base_lr", num(lr));
    singa_conf_add(u, "type", str(type));
    singa_conf_add(u, "momentum", num(0.9));
    singa_conf_add(u, "learning_rate", rate);
    return u;
}

/* The net the tests train on write_data's set in dir: softmax regression of 16 pixels into 4
 * classes, batch 8. */
static inline singa_conf *softmax_net(const char *dir)
{
    char path[2][512];
    snprintf(path[0], sizeof path[0], "%s/images", dir);
    snprintf(path[1], sizeof path[1], "%s/labels", dir);
    singa_conf *net = singa_conf_new(SINGA_CONF_TABLE), *layers = singa_conf_new(SINGA_CONF_LIST),
               *data = layer("data", "kIDXData", NULL), *image = layer("image", "kMnist", "data"),
               *fc = layer("fc1", "kInnerProduct", "image"), *loss = layer("loss", "kSoftmaxLoss", NULL),
               *src = singa_conf_new(SINGA_CONF_LIST);
    singa_conf_add(data, "batchsize", num(8));
    singa_conf_add(data, "images", str(path[0]));
    singa_conf_add(data, "labels", str(path[1]));
    singa_conf_add(image, "norm_a", num(255));
    singa_conf_add(fc, "num_output", num(4));
    singa_conf_add(src, NULL, str("fc1"));
    singa_conf_add(src, NULL, str("label"));
    singa_conf_add(loss, "srclayer", src);
    singa_conf_add(layers, NULL, data);
    singa_conf_add(layers, NULL, image);
    singa_conf_add(layers, NULL, layer("label", "kLabel", "data"));
    singa_conf_add(layers, NULL, fc);
    singa_conf_add(layers, NULL, loss);
    singa_conf_add(net, "layer", layers);
    return net;
}

#endif
