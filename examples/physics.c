// SPDX-License-Identifier: MIT
// The smallest physics program: a ground plane, a stack of three boxes, a
// ball thrown at it, a compound body (a box with a pyramid-shaped convex hull
// on top) dropped next to it and a door on a motorised hinge; 3 seconds at
// 60 Hz, then where everything ended up, the ball's pose as a renderer's
// float matrix, and the checksum every machine computes for that state.
// (docs/guide/physics.md shows the parts between the `// [name]` marks.)
//
//     cc physics.c $(pkg-config --cflags --libs lockstep) -o physics
#include <ls/world.h>

#include <ls/fx_text.h>
#include <ls/hull.h>
#include <ls/joint.h>
#include <ls/render_float.h>
#include <stdio.h>

// [add]
static ls_body_id add(ls_world *w, ls_body_def *def)
{
    ls_error err;
    ls_body_id id = ls_body_create(w, def, &err);
    if (id.index1 == 0) {
        fprintf(stderr, "physics: body refused: %s (field %s)\n", err.message, err.field);
    }
    return id;
}
// [add]

int main(void)
{
    // [world]
    ls_error err;
    ls_world_def wd = ls_default_world_def(); // 60 Hz, gravity -9.81 m/s^2
    ls_world *w = ls_world_create(&wd, &err);
    if (!w) {
        fprintf(stderr, "physics: %s\n", err.message);
        return 1;
    }
    // [world]

    // [bodies]
    ls_body_def ground = ls_default_body_def();
    ground.type = LS_BODY_STATIC;
    ground.shape.type = LS_SHAPE_PLANE;
    ground.shape.normal = ls_vec3_make(0, LS_FX_ONE, 0);
    add(w, &ground);

    ls_body_id boxes[3];
    for (int i = 0; i < 3; i++) {
        ls_body_def box = ls_default_body_def(); // dynamic 1 m box, 1000 kg/m^3
        box.shape.half_extents = ls_vec3_make(LS_FX_ONE / 2, LS_FX_ONE / 2, LS_FX_ONE / 2);
        box.position = ls_vec3_make(0, LS_FX_ONE / 2 + ls_fx_from_int(i), 0);
        boxes[i] = add(w, &box);
    }

    ls_body_def ball = ls_default_body_def();
    ball.shape.type = LS_SHAPE_SPHERE;
    ball.shape.radius = LS_FX_ONE / 4;
    ball.shape.density = ls_fx_from_int(8000); // steel
    ball.position = ls_vec3_make(ls_fx_from_int(-4), ls_fx_from_int(2), 0);
    ball.linear_velocity = ls_vec3_make(ls_fx_from_int(12), ls_fx_from_int(2), 0);
    ls_body_id b = add(w, &ball);
    // [bodies]

    // A compound body: a box and a hull pyramid 1 m above its origin. The
    // world keeps its own copy of the hull, so ours is freed at once.
    ls_vec3 pts[5] = {{0, 32768, 0},
                      {26214, 0, 26214},
                      {-26214, 0, 26214},
                      {26214, 0, -26214},
                      {-26214, 0, -26214}};
    ls_hull *pyramid = ls_hull_create(pts, 5, &err);
    if (!pyramid) {
        fprintf(stderr, "physics: hull refused: %s\n", err.message);
        return 1;
    }
    ls_shape_def parts[2] = {ls_default_shape_def(), ls_default_shape_def()};
    parts[0].density = parts[1].density = ls_fx_from_int(500); // 1000 kg is the limit
    parts[1].type = LS_SHAPE_HULL;
    parts[1].hull = pyramid;
    parts[1].local_position = ls_vec3_make(0, LS_FX_ONE / 2, 0);
    ls_body_def mallet = ls_default_body_def();
    mallet.shapes = parts;
    mallet.shape_count = 2;
    mallet.position = ls_vec3_make(ls_fx_from_int(3), ls_fx_from_int(2), 0);
    ls_body_id m = add(w, &mallet);
    ls_hull_destroy(pyramid);

    // A door: a plank hinged to a static post about +y, driven open by a
    // motor until its 90 degree limit stops it (SPEC.md section 23).
    ls_body_def post = ls_default_body_def();
    post.type = LS_BODY_STATIC;
    post.shape.half_extents = ls_vec3_make(LS_FX_ONE / 10, LS_FX_ONE, LS_FX_ONE / 10);
    post.position = ls_vec3_make(0, LS_FX_ONE, ls_fx_from_int(-4));
    ls_body_id post_id = add(w, &post);
    ls_body_def door = ls_default_body_def();
    door.shape.half_extents = ls_vec3_make(LS_FX_ONE / 2, 58982, LS_FX_ONE / 16); // 0.9 m high
    door.shape.density = ls_fx_from_int(500);
    door.position = ls_vec3_make(39322, LS_FX_ONE, ls_fx_from_int(-4)); // x 0.6
    ls_body_id door_id = add(w, &door);
    ls_joint_def hinge = ls_default_joint_def();
    hinge.type = LS_JOINT_HINGE;
    hinge.body_a = post_id;
    hinge.body_b = door_id;
    hinge.anchor = ls_vec3_make(LS_FX_ONE / 10, LS_FX_ONE, ls_fx_from_int(-4));
    hinge.axis = ls_vec3_make(0, LS_FX_ONE, 0);
    hinge.enable_limit = true;
    hinge.lower = 0;
    hinge.upper = 102944; // pi/2
    hinge.enable_motor = true;
    hinge.motor_speed = LS_FX_ONE; // 1 rad/s
    hinge.max_motor_torque = ls_fx_from_int(50);
    ls_joint_id hinge_id = ls_joint_create(w, &hinge, &err);
    if (hinge_id.index1 == 0) {
        fprintf(stderr, "physics: joint refused: %s (field %s)\n", err.message, err.field);
        return 1;
    }

    // [step]
    for (int t = 0; t < 180; t++) {
        ls_world_step(w);
    }
    for (int i = 0; i < 3; i++) {
        char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX];
        ls_vec3 p = ls_body_position(w, boxes[i]);
        ls_fx_format(p.x, x);
        ls_fx_format(p.y, y);
        printf("box %d at x %s y %s%s\n", i, x, y,
               ls_body_is_asleep(w, boxes[i]) ? " (asleep)" : "");
    }
    // [step]
    char bx[LS_FX_TEXT_MAX];
    ls_fx_format(ls_body_position(w, b).x, bx);
    printf("ball at x %s\n", bx);
    char my[LS_FX_TEXT_MAX];
    ls_fx_format(ls_body_position(w, m).y, my);
    printf("compound (%u shapes) centre of mass at y %s\n", ls_body_shape_count(w, m), my);
    char angle[LS_FX_TEXT_MAX];
    ls_fx_format(ls_joint_hinge_angle(w, hinge_id), angle);
    printf("door open %s rad (limit 1.5708)\n", angle);
    // [render]
    // What a renderer draws: the ball's pose as a float model matrix (column-major,
    // translation in model[12..14]). Display only: nothing converts it back.
    float model[16];
    ls_render_transformf(ls_body_position(w, b), ls_body_orientation(w, b), model);
    printf("ball model matrix translation %.3f %.3f %.3f\n", (double)model[12], (double)model[13],
           (double)model[14]);
    // [render]
    // [checksum]
    printf("tick %u checksum %016llx\n", ls_world_tick(w),
           (unsigned long long)ls_world_checksum(w));
    // [checksum]
    ls_world_destroy(w);
    return 0;
}
