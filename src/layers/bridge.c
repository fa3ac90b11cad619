/* kBridgeSrc and kBridgeDst: the two ends of an edge between workers in a partitioned net
 * (singa/partition.h), inserted by the partitioner.  kBridgeSrc sits on the source's worker and
 * kBridgeDst on the reader's; features go forward through the pair and gradients back.  In a
 * net that holds both ends (a whole group's net in one) the pair is the identity. */
#include "layers/layers.h"

static const singa_field no_fields[] = {{NULL, 0}};

#define BRIDGE(var, type_name)                                                                     \
    const singa_layer_type var = {                                                                 \
        .name = type_name, .fields = no_fields, .min_src = 1, .max_src = 1,                        \
        .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS,                              \
        .setup = singa_layer_setup_copy,       .forward = singa_layer_copy_forward,                  \
        .backward = singa_layer_copy_backward,                                                     \
    }

BRIDGE(singa_bridge_src_layer, "kBridgeSrc");
BRIDGE(singa_bridge_dst_layer, "kBridgeDst");
