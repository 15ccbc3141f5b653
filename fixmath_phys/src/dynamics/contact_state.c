// SPDX-License-Identifier: MIT
// The state walk of the persistent contacts (world/state.h; SPEC.md §13):
// their snapshot record, and what restore must prove of them. Contacts are
// not in the checksum (SPEC.md §12): they follow from the bodies' state.
#include "../collision/mesh.h"
#include "../math/quat_check.h"
#include "../world/state.h"

static void io_contact(ls_cursor *c, ls_contact *ct)
{
    ls_io32_(c, &ct->shape_a);
    ls_io32_(c, &ct->shape_b);
    ls_io32_(c, &ct->child);
    ls_io_vec3_(c, &ct->m.normal);
    ls_io32_(c, &ct->m.count);
    for (int i = 0; i < LS_MANIFOLD_MAX; i++) {
        ls_io_vec3_(c, &ct->m.points[i].point);
        ls_io32_(c, &ct->m.points[i].depth);
        ls_io32_(c, &ct->m.points[i].feature);
        ls_io32_(c, &ct->normal_impulse[i]);
        ls_io_vec3_(c, &ct->anchor_a[i]);
        ls_io_vec3_(c, &ct->anchor_b[i]);
        ls_io32_(c, &ct->base_depth[i]);
        ls_io32_(c, &ct->lever[i]);
    }
    ls_io_vec3_(c, &ct->friction_impulse);
    ls_io32_(c, &ct->twist_impulse);
    ls_io_vec3_(c, &ct->rolling_impulse);
    for (int k = 0; k < 2; k++) {
        ls_io_vec3_(c, &ct->pose_p[k]);
        ls_io_quat_(c, &ct->pose_q[k]);
        ls_io_vec3_(c, &ct->tangent[k]);
    }
    ls_io32_(c, &ct->friction);
    ls_io32_(c, &ct->restitution);
}

void ls_contact_state_io_(ls_cursor *c, ls_world *w)
{
    for (uint32_t i = 0; i < w->contact_count && c->ok; i++) {
        io_contact(c, &w->contacts[i]);
    }
}

// A stored impulse inside the solver range [-2^30, 2^30) (SPEC.md §11.4).
static bool impulse_ok(ls_vec3 v)
{
    const ls_fx lim = 1 << 30;
    return v.x >= -lim && v.x < lim && v.y >= -lim && v.y < lim && v.z >= -lim && v.z < lim;
}

static bool quat_unit(ls_quat q)
{
    return ls_quat_is_stored_unit(q);
}

const char *ls_contact_state_problem_(ls_world *w, uint32_t *where)
{
    for (uint32_t i = 0; i < w->contact_count; i++) {
        ls_contact *ct = &w->contacts[i];
        *where = i;
        if (ct->shape_a >= ct->shape_b || ct->shape_b >= w->shape_high ||
            !w->shapes[ct->shape_a].alive || !w->shapes[ct->shape_b].alive ||
            w->shapes[ct->shape_a].body == w->shapes[ct->shape_b].body || ct->m.count < 0 ||
            ct->m.count > LS_MANIFOLD_MAX || !ls_state_vec_ok_(ct->m.normal)) {
            return "contact";
        }
        ct->a = w->shapes[ct->shape_a].body;
        ct->b = w->shapes[ct->shape_b].body;
        const ls_geom *ga = &w->shapes[ct->shape_a].geom, *gb = &w->shapes[ct->shape_b].geom;
        uint32_t children = ga->mesh   ? ls_mesh_triangle_count(ga->mesh)
                            : gb->mesh ? ls_mesh_triangle_count(gb->mesh)
                                       : 1;
        if (ct->child >= children) {
            return "contact child";
        }
        for (int k = 0; k < LS_MANIFOLD_MAX; k++) {
            // Normal impulses are accumulated clamped at 0 inside the solver
            // range (SPEC.md §11.4); every word a real value.
            if (ct->normal_impulse[k] < 0 || !ls_state_vec_ok_(ct->m.points[k].point) ||
                !ls_state_fx_ok_(ct->m.points[k].depth) || !ls_state_vec_ok_(ct->anchor_a[k]) ||
                !ls_state_vec_ok_(ct->anchor_b[k]) || !ls_state_fx_ok_(ct->base_depth[k])) {
                return "contact impulse or point";
            }
        }
        if (!impulse_ok(ct->friction_impulse) || !impulse_ok(ct->rolling_impulse) ||
            ct->twist_impulse < -(1 << 30) || ct->twist_impulse >= (1 << 30)) {
            return "contact impulse or point";
        }
        if (!ls_state_vec_ok_(ct->pose_p[0]) || !ls_state_vec_ok_(ct->pose_p[1]) ||
            !quat_unit(ct->pose_q[0]) || !quat_unit(ct->pose_q[1])) {
            return "contact pose";
        }
        // Tangents within 2 ulp of unit length and materials within their ranges.
        for (int k = 0; k < 2; k++) {
            uint64_t t = ls_vec3_len_sq_q32(ct->tangent[k]), one = (uint64_t)1 << 32;
            if (t > one + (one >> 12) || t < one - (one >> 12)) {
                return "contact tangent";
            }
        }
        if (ct->friction < 0 || ct->friction > LS_FX_INT(4) || ct->restitution < 0 ||
            ct->restitution > LS_FX_ONE) {
            return "contact material";
        }
        for (int k = 0; k < LS_MANIFOLD_MAX; k++) {
            if (ct->lever[k] < 0) {
                return "contact lever";
            }
        }
        const ls_contact *p = ct - 1;
        if (i > 0 &&
            (p->shape_a > ct->shape_a || (p->shape_a == ct->shape_a && p->shape_b > ct->shape_b) ||
             (p->shape_a == ct->shape_a && p->shape_b == ct->shape_b && p->child >= ct->child))) {
            return "contact order";
        }
    }
    return NULL;
}
