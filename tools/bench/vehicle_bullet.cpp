// SPDX-License-Identifier: MIT
// build/bench_vehicle_bullet: Bullet's btRaycastVehicle (Debian libbullet-dev
// 3.24, single precision) behind the vehicle interface, built from the same
// scene description as ours: btDiscreteDynamicsWorld (dbvt, SI solver with
// iterations = our solver passes), the terrain a btBvhTriangleMeshShape of the
// same triangles, the chassis btBoxShapes of the same mass, four wheels each
// with Bullet's tuning converted from our SI values (Bullet's spring and
// damper are per kg of chassis). One step of our exact dt per tick. What
// differs is listed in tools/bench/README.md. Benchmark only.
#include "vehicle_bench.h"

#include <btBulletDynamicsCommon.h>

#include <BulletDynamics/Vehicle/btRaycastVehicle.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace
{

struct BulletWorld {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
    std::vector<int> indices;
    std::vector<btScalar> vertices;
    std::unique_ptr<btTriangleIndexVertexArray> mesh;
    std::unique_ptr<btCollisionShape> terrain_shape, box;
    std::unique_ptr<btRigidBody> terrain;
    std::unique_ptr<btDefaultVehicleRaycaster> raycaster;
    std::vector<std::unique_ptr<btRigidBody>> chassis;
    std::vector<std::unique_ptr<btRaycastVehicle>> cars;
    btScalar dt = 0, max_steer = 0, engine_force = 0;
    const bench_vehicle_scene *scene = nullptr;

    ~BulletWorld()
    {
        for (auto &c : cars) {
            world.removeAction(c.get());
        }
        for (auto &b : chassis) {
            world.removeRigidBody(b.get());
        }
        if (terrain) {
            world.removeRigidBody(terrain.get());
        }
    }
};

btVector3 vec(const double v[3])
{
    return btVector3(btScalar(v[0]), btScalar(v[1]), btScalar(v[2]));
}

void *bullet_create(const bench_vehicle_scene *s, char *err, size_t err_size)
{
    auto *w = new BulletWorld;
    w->scene = s;
    w->dt = btScalar(s->dt);
    w->max_steer = btScalar(s->max_steer);
    w->engine_force = btScalar(s->engine_force);
    w->world.setGravity(btVector3(0, btScalar(-s->gravity), 0));
    w->world.getSolverInfo().m_numIterations = int(s->solver_passes);
    // Terrain: the same vertices and triangles, a static BVH mesh.
    w->vertices.resize(3 * size_t(s->vertex_count));
    for (size_t i = 0; i < w->vertices.size(); i++) {
        w->vertices[i] = btScalar(s->vertices[i]);
    }
    w->indices.assign(s->triangles, s->triangles + 3 * size_t(s->triangle_count));
    w->mesh.reset(new btTriangleIndexVertexArray(int(s->triangle_count), w->indices.data(),
                                                 3 * int(sizeof(int)), int(s->vertex_count),
                                                 w->vertices.data(), 3 * int(sizeof(btScalar))));
    w->terrain_shape.reset(new btBvhTriangleMeshShape(w->mesh.get(), true));
    btRigidBody::btRigidBodyConstructionInfo ginfo(0, nullptr, w->terrain_shape.get());
    ginfo.m_friction = btScalar(s->ground_friction);
    w->terrain.reset(new btRigidBody(ginfo));
    w->world.addRigidBody(w->terrain.get());
    // Chassis and vehicles.
    w->box.reset(new btBoxShape(vec(s->half)));
    btVector3 inertia(0, 0, 0);
    w->box->calculateLocalInertia(btScalar(s->mass), inertia);
    w->raycaster.reset(new btDefaultVehicleRaycaster(&w->world));
    btRaycastVehicle::btVehicleTuning tuning;
    // Bullet multiplies its spring and damper by the chassis mass.
    tuning.m_suspensionStiffness = btScalar(s->stiffness / s->mass);
    tuning.m_suspensionCompression = btScalar(s->damping / s->mass);
    tuning.m_suspensionDamping = btScalar(s->damping / s->mass);
    tuning.m_maxSuspensionTravelCm = btScalar(100 * s->max_travel);
    tuning.m_frictionSlip = btScalar(s->friction);
    tuning.m_maxSuspensionForce = btScalar(1e6); // ours has no cap (default 6000 N)
    for (uint32_t k = 0; k < BENCH_VEHICLE_CARS; k++) {
        btTransform start;
        start.setIdentity();
        start.setOrigin(vec(s->start[k]));
        btRigidBody::btRigidBodyConstructionInfo info(btScalar(s->mass), nullptr, w->box.get(),
                                                      inertia);
        info.m_startWorldTransform = start;
        info.m_friction = 1;
        auto *body = new btRigidBody(info);
        body->setActivationState(DISABLE_DEACTIVATION);
        w->chassis.emplace_back(body);
        w->world.addRigidBody(body);
        auto *car = new btRaycastVehicle(tuning, body, w->raycaster.get());
        car->setCoordinateSystem(0, 1, 2); // right x, up y, forward z
        for (int i = 0; i < BENCH_VEHICLE_WHEELS; i++) {
            const bench_wheel &wh = s->wheels[i];
            btWheelInfo &info_w =
                car->addWheel(vec(wh.mount), btVector3(0, -1, 0), btVector3(-1, 0, 0),
                              btScalar(s->rest_length), btScalar(s->radius), tuning, wh.front != 0);
            info_w.m_rollInfluence = 1; // side impulses at the contact (Bullet's demo: 0.1)
        }
        w->cars.emplace_back(car);
        w->world.addAction(car);
    }
    (void)err, (void)err_size;
    return w;
}

void bullet_controls(void *h, uint32_t k, const bench_vehicle_controls *c)
{
    auto *w = static_cast<BulletWorld *>(h);
    btRaycastVehicle *car = w->cars[k].get();
    // Bullet's positive steering turns the wheel about +y: towards +x, the
    // car's left; ours is positive to the right.
    btScalar angle = -btScalar(c->steer) * w->max_steer;
    btScalar force = btScalar(c->throttle) * w->engine_force / BENCH_VEHICLE_WHEELS;
    for (int i = 0; i < BENCH_VEHICLE_WHEELS; i++) {
        car->setSteeringValue(w->scene->wheels[i].front ? angle : 0, i);
        car->applyEngineForce(force, i);
        car->setBrake(0, i);
    }
}

void bullet_step(void *h)
{
    auto *w = static_cast<BulletWorld *>(h);
    w->world.stepSimulation(w->dt, 0); // exactly one step of dt
}

void bullet_car(void *h, uint32_t k, bench_car_state *out)
{
    auto *w = static_cast<BulletWorld *>(h);
    const btRigidBody *b = w->chassis[k].get();
    const btTransform &t = b->getCenterOfMassTransform();
    btVector3 p = t.getOrigin(), v = b->getLinearVelocity();
    btVector3 up = t.getBasis() * btVector3(0, 1, 0), fwd = t.getBasis() * btVector3(0, 0, 1);
    for (int i = 0; i < 3; i++) {
        out->pos[i] = p[i];
        out->vel[i] = v[i];
        out->forward[i] = fwd[i];
    }
    out->up_y = up[1];
    out->in_contact = 0;
    const btRaycastVehicle *car = w->cars[k].get();
    for (int i = 0; i < car->getNumWheels(); i++) {
        out->in_contact += car->getWheelInfo(i).m_raycastInfo.m_isInContact ? 1 : 0;
    }
}

void bullet_destroy(void *h)
{
    delete static_cast<BulletWorld *>(h);
}

} // namespace

int main(int argc, char **argv)
{
    static const bench_vehicle_engine e = {"bullet",      "Bullet 3.24",   "float",
                                           bullet_create, bullet_controls, bullet_step,
                                           bullet_car,    bullet_destroy};
    return bench_vehicle_main(&e, argc, argv);
}
