// SPDX-License-Identifier: MIT
// build/bench_bullet: Bullet (Debian libbullet-dev 3.24, single precision)
// behind the bench interface: btDiscreteDynamicsWorld + btDbvtBroadphase +
// btSequentialImpulseConstraintSolver, built from OUR scene file so bodies,
// sizes, masses, dt, gravity and iteration count are identical. Benchmark only.
#include "bench.h"

#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
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
    std::vector<std::unique_ptr<btCollisionShape>> shapes;
    std::vector<std::unique_ptr<btRigidBody>> bodies;
    std::vector<btRigidBody *> dynamic;
    btScalar dt = 0;

    ~BulletWorld()
    {
        for (auto &b : bodies) {
            world.removeRigidBody(b.get());
        }
    }
};

// Our pair rules: friction sqrt(a*b), restitution max(a, b) (Bullet's defaults are
// a*b for both). Each engine gets the same per-pair coefficients.
btScalar mix_friction(const btCollisionObject *a, const btCollisionObject *b)
{
    return btSqrt(a->getFriction() * b->getFriction());
}

btScalar mix_restitution(const btCollisionObject *a, const btCollisionObject *b)
{
    return std::max(a->getRestitution(), b->getRestitution());
}

btCollisionShape *make_shape(const bench_body &b)
{
    switch (b.shape) {
    case BENCH_SPHERE:
        return new btSphereShape(btScalar(b.radius));
    case BENCH_BOX: // default margin 0.04 m lies inside the half extents (size unchanged)
        return new btBoxShape(
            btVector3(btScalar(b.half[0]), btScalar(b.half[1]), btScalar(b.half[2])));
    case BENCH_CAPSULE: // Bullet's capsule is along local Y, like ours
        return new btCapsuleShape(btScalar(b.radius), btScalar(2 * b.half_height));
    default:
        return new btStaticPlaneShape(
            btVector3(btScalar(b.normal[0]), btScalar(b.normal[1]), btScalar(b.normal[2])),
            btScalar(b.plane_d));
    }
}

void *bullet_create(const bench_scene *s, char *err, size_t err_size)
{
    gCalculateCombinedFrictionCallback = mix_friction;
    gCalculateCombinedRestitutionCallback = mix_restitution;
    gDeactivationTime = btScalar(s->sleep_time); // our sleep_time (Bullet default 2 s)
    auto *w = new BulletWorld;
    w->dt = btScalar(s->dt);
    w->world.setGravity(
        btVector3(btScalar(s->gravity[0]), btScalar(s->gravity[1]), btScalar(s->gravity[2])));
    btContactSolverInfo &si = w->world.getSolverInfo();
    si.m_numIterations = s->velocity_iterations; // 8, like our velocity iterations
    si.m_erp = btScalar(s->baumgarte);           // 0.2 (Bullet default too)
    si.m_splitImpulse = 1;                       // position error by split impulse, like ours
    si.m_linearSlop = btScalar(s->linear_slop);  // 0.005 m
    si.m_restitutionVelocityThreshold = btScalar(s->restitution_thresh); // 1 m/s
    for (uint32_t i = 0; i < s->count; i++) {
        const bench_body &b = s->bodies[i];
        btCollisionShape *shape = make_shape(b);
        w->shapes.emplace_back(shape);
        btScalar mass = b.type == BENCH_DYNAMIC ? btScalar(b.mass) : btScalar(0);
        btVector3 inertia(0, 0, 0);
        if (mass > 0) {
            shape->calculateLocalInertia(mass, inertia);
        }
        btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape, inertia);
        btTransform xf;
        xf.setIdentity();
        xf.setOrigin(btVector3(btScalar(b.pos[0]), btScalar(b.pos[1]), btScalar(b.pos[2])));
        xf.setRotation(btQuaternion(btScalar(b.quat[0]), btScalar(b.quat[1]), btScalar(b.quat[2]),
                                    btScalar(b.quat[3])));
        info.m_startWorldTransform = xf;
        info.m_friction = btScalar(b.friction);
        info.m_restitution = btScalar(b.restitution);
        info.m_linearSleepingThreshold = btScalar(s->sleep_linear);
        info.m_angularSleepingThreshold = btScalar(s->sleep_angular);
        info.m_linearDamping = btScalar(b.lin_damp);
        info.m_angularDamping = btScalar(b.ang_damp);
        auto *body = new btRigidBody(info);
        w->bodies.emplace_back(body);
        if (b.type == BENCH_DYNAMIC) {
            body->setLinearVelocity(
                btVector3(btScalar(b.vel[0]), btScalar(b.vel[1]), btScalar(b.vel[2])));
            body->setAngularVelocity(
                btVector3(btScalar(b.angvel[0]), btScalar(b.angvel[1]), btScalar(b.angvel[2])));
            if (!b.allow_sleep) {
                body->setActivationState(DISABLE_DEACTIVATION);
            }
            w->dynamic.push_back(body);
        }
        w->world.addRigidBody(body);
    }
    (void)err;
    (void)err_size;
    return w;
}

void bullet_step(void *h)
{
    auto *w = static_cast<BulletWorld *>(h);
    w->world.stepSimulation(w->dt, 0); // maxSubSteps 0: exactly one step of dt
}

void bullet_positions(void *h, double *xyz)
{
    auto *w = static_cast<BulletWorld *>(h);
    for (btRigidBody *b : w->dynamic) {
        const btVector3 &p = b->getWorldTransform().getOrigin();
        *xyz++ = p.x(), *xyz++ = p.y(), *xyz++ = p.z();
    }
}

bench_stats bullet_stats(void *h)
{
    auto *w = static_cast<BulletWorld *>(h);
    bench_stats st{0, 0, 0};
    int n = w->dispatcher.getNumManifolds();
    for (int i = 0; i < n; i++) {
        const btPersistentManifold *m = w->dispatcher.getManifoldByIndexInternal(i);
        bool touching = false;
        for (int k = 0; k < m->getNumContacts(); k++) {
            btScalar dist = m->getContactPoint(k).getDistance();
            touching = touching || dist <= 0;
            st.max_penetration = std::max(st.max_penetration, double(-dist));
        }
        st.contacts += touching;
    }
    for (btRigidBody *b : w->dynamic) {
        st.asleep += b->getActivationState() == ISLAND_SLEEPING;
    }
    return st;
}

void bullet_destroy(void *h)
{
    delete static_cast<BulletWorld *>(h);
}

} // namespace

int main(int argc, char **argv)
{
    static const bench_engine e = {"bullet",    "3.24",           "float",      bullet_create,
                                   bullet_step, bullet_positions, bullet_stats, bullet_destroy};
    return bench_engine_main(&e, argc, argv);
}
