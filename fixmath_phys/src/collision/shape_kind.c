// SPDX-License-Identifier: MIT
// The table of shape kinds (see shape_kind.h).
#include "shape_kind.h"

#include "../../../core/src/error_field.h"
#include "ls/fx_text.h"

#include <stdio.h>
#include <string.h>

// Indexed by ls_shape_type: the one place that lists the kinds.
const ls_shape_kind *const ls_shape_kinds_[LS_SHAPE_KIND_COUNT] = {
    [LS_SHAPE_SPHERE] = &ls_sphere_kind_,   [LS_SHAPE_BOX] = &ls_box_kind_,
    [LS_SHAPE_CAPSULE] = &ls_capsule_kind_, [LS_SHAPE_PLANE] = &ls_plane_kind_,
    [LS_SHAPE_HULL] = &ls_hull_kind_,       [LS_SHAPE_MESH] = &ls_mesh_kind_,
};

ls_shape_type ls_shape_kind_named_(const char *name)
{
    for (int k = 0; k < LS_SHAPE_KIND_COUNT; k++) {
        if (strcmp(ls_shape_kinds_[k]->name, name) == 0) {
            return (ls_shape_type)k;
        }
    }
    return LS_SHAPE_KIND_COUNT;
}

bool ls_shape_refuse_(ls_error *err, const char *field, const char *what, bool has_value,
                      ls_fx value)
{
    if (has_value) {
        char text[LS_FX_TEXT_MAX];
        ls_fx_format(value, text);
        ls_error_set_field_(err, LS_ERR_OUT_OF_RANGE, field, "%s (got %s)", what, text);
    } else {
        ls_error_set_field_(err, LS_ERR_OUT_OF_RANGE, field, "%s", what);
    }
    return false;
}
