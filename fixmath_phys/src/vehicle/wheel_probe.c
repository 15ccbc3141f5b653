// SPDX-License-Identifier: MIT
// Wheel probes (SPEC.md §26.3): a ray or a sphere cast from the mount along
// the suspension axis, skipping the chassis's own shapes.
#include "vehicle_internal.h"

#include <string.h>

void ls_vehicle_probe_wheel_(const ls_world *w, const ls_vehicle *v, const ls_body *b, uint32_t i,
                             ls_wheel_probe_hit *pr)
{
    const ls_wheel_def *wd = &v->def.wheels[i];
    memset(pr, 0, sizeof *pr);
    pr->ground = UINT32_MAX;
    pr->mount = ls_vec3_add(b->p, ls_mat3_mul_vec(b->xf.r, wd->mount));
    pr->axis = ls_mat3_mul_vec(b->xf.r, wd->axis);
    ls_query_filter filter = v->def.filter;
    filter.ignore = v->def.chassis; // never the chassis's own shapes
    ls_ray_hit hit;
    if (v->def.probe == LS_WHEEL_SPHERE) {
        ls_shape_def sd = ls_default_shape_def();
        sd.type = LS_SHAPE_SPHERE;
        sd.radius = wd->radius;
        ls_vec3 move = ls_vec3_scale(pr->axis, wd->rest_length);
        if (!ls_world_shape_cast(w, &sd, pr->mount, ls_quat_identity(), move, &filter, &hit)) {
            return;
        }
        pr->raw = (int64_t)wd->rest_length - ls_fx_mul(hit.fraction, wd->rest_length);
    } else {
        ls_fx reach = wd->rest_length + wd->radius;
        ls_vec3 to = ls_vec3_add(pr->mount, ls_vec3_scale(pr->axis, reach));
        if (!ls_world_ray_cast_filtered(w, pr->mount, to, &filter, &hit)) {
            return;
        }
        pr->raw = (int64_t)reach - ls_fx_mul(hit.fraction, reach);
    }
    pr->hit = true;
    pr->point = hit.point;
    pr->normal = hit.normal;
    const ls_body *g = ls_world_body_(w, hit.body);
    ls_vec3 vg = ls_vec3_zero();
    if (g && g->type != LS_BODY_STATIC) {
        pr->ground = hit.body.index1 - 1;
        vg = ls_vehicle_point_velocity_(g, pr->point);
    }
    ls_vec3 rel = ls_vec3_sub(ls_vehicle_point_velocity_(b, pr->point), vg);
    pr->speed = ls_vec3_dot(rel, pr->axis); // along the axis (down) = compressing
}
