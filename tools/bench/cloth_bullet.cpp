// SPDX-License-Identifier: MIT
// build/bench_cloth_bullet: Bullet's soft-body cloth (Debian libbullet-dev
// 3.24, single precision) behind the cloth interface, built from OUR scene
// file: btSoftRigidDynamicsWorld + btSoftBodyRigidBodyCollisionConfiguration,
// the cloth from btSoftBodyHelpers::CreatePatch (same corners, resolution and
// node order as ours), its links remade as our sticks in our order, our pins
// as zero-mass nodes, piterations = our iterations, the static bodies
// btRigidBodies. What differs is listed in tools/bench/README.md.
// Benchmark only.
#include "cloth.h"

#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

namespace
{

btVector3 vec(const double v[3])
{
    return btVector3(btScalar(v[0]), btScalar(v[1]), btScalar(v[2]));
}

struct SoftWorld {
    btSoftBodyRigidBodyCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btSoftRigidDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
    std::vector<std::unique_ptr<btCollisionShape>> shapes;
    std::vector<std::unique_ptr<btRigidBody>> bodies;
    std::unique_ptr<btSoftBody> cloth;
    btScalar dt = 0;

    ~SoftWorld()
    {
        if (cloth) {
            world.removeSoftBody(cloth.get());
        }
        for (auto &b : bodies) {
            world.removeRigidBody(b.get());
        }
    }
};

btCollisionShape *make_shape(const bench_shape &s)
{
    switch (s.kind) {
    case BENCH_SPHERE:
        return new btSphereShape(btScalar(s.radius));
    case BENCH_BOX:
        return new btBoxShape(vec(s.half));
    case BENCH_CAPSULE:
        return new btCapsuleShape(btScalar(s.radius), btScalar(2 * s.half_height));
    case BENCH_PLANE:
        return new btStaticPlaneShape(vec(s.normal), btScalar(s.plane_d));
    default:
        return nullptr;
    }
}

void *cloth_create(const bench_cloth *c, char *err, size_t err_size)
{
    const bench_scene *s = &c->rigid;
    auto *w = new SoftWorld;
    w->dt = btScalar(s->dt);
    btVector3 g = vec(s->gravity);
    w->world.setGravity(g);
    btSoftBodyWorldInfo &wi = w->world.getWorldInfo();
    wi.m_gravity = g;
    wi.air_density = 0; // no aerodynamics (ours has none); kLF = kDG = 0 anyway
    wi.water_density = 0;
    wi.m_sparsesdf.Initialize();
    // Rigid bodies: the scene's static bodies (the sphere, a ground plane).
    for (uint32_t i = 0; i < s->count; i++) {
        const bench_body &b = s->bodies[i];
        if (b.type != BENCH_STATIC || b.shape_count != 1 || !b.shapes[0].identity) {
            std::snprintf(err, err_size, "body %u: the cloth bench takes static one-shape bodies",
                          i + 1);
            delete w;
            return nullptr;
        }
        btCollisionShape *shape = make_shape(b.shapes[0]);
        if (!shape) {
            std::snprintf(err, err_size, "body %u: unsupported shape", i + 1);
            delete w;
            return nullptr;
        }
        w->shapes.emplace_back(shape);
        btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, shape, btVector3(0, 0, 0));
        info.m_startWorldTransform.setIdentity();
        info.m_startWorldTransform.setOrigin(vec(b.pos));
        info.m_startWorldTransform.setRotation(btQuaternion(
            btScalar(b.quat[0]), btScalar(b.quat[1]), btScalar(b.quat[2]), btScalar(b.quat[3])));
        // Bullet's soft-rigid friction is kDF x the body's friction; kDF = 1
        // below, so the body carries our pair's coefficient sqrt(cloth x shape).
        info.m_friction = btScalar(std::sqrt(c->friction * b.shapes[0].friction));
        auto *body = new btRigidBody(info);
        w->bodies.emplace_back(body);
        w->world.addRigidBody(body);
    }
    // The cloth: CreatePatch's corners are our corner particles, so its nodes
    // (lerped) sit where ours are, in the same j * nx + i order.
    uint32_t nx = c->nx, ny = c->ny;
    const double *x = c->x0;
    auto corner = [&](uint32_t i, uint32_t j) { return vec(x + 3 * size_t(j * nx + i)); };
    btSoftBody *sb =
        btSoftBodyHelpers::CreatePatch(wi, corner(0, 0), corner(nx - 1, 0), corner(0, ny - 1),
                                       corner(nx - 1, ny - 1), int(nx), int(ny), 0, false);
    w->cloth.reset(sb);
    // Exact start positions (lerp in float may differ by an ulp) and our masses.
    for (uint32_t k = 0; k < c->count; k++) {
        btSoftBody::Node &n = sb->m_nodes[int(k)];
        n.m_x = n.m_q = vec(x + 3 * size_t(k));
        sb->setMass(int(k), c->inv_mass[k] > 0 ? btScalar(c->particle_mass) : btScalar(0));
    }
    // CreatePatch made the structural links (and the faces); the links are
    // remade as our sticks in our order (14 batches, cloth_common.c), since a
    // Gauss-Seidel relaxation depends on the order. Bend links get their own
    // material when their stiffness is not 1 (kLST: the fraction of the error
    // a projection removes, like ours).
    btSoftBody::Material *m = sb->m_materials[0];
    m->m_kLST = 1; // rigid links (Bullet's default; ours are rigid sticks)
    m->m_kAST = 1;
    m->m_kVST = 1;
    btSoftBody::Material *bend = m;
    if (c->bend_stiffness != 1) {
        bend = sb->appendMaterial();
        bend->m_kLST = btScalar(c->bend_stiffness);
        bend->m_kAST = bend->m_kVST = 1;
    }
    sb->m_links.resize(0);
    for (uint32_t k = 0; k < c->stick_count; k++) {
        sb->appendLink(int(c->sticks[2 * k]), int(c->sticks[2 * k + 1]),
                       c->stick_kind[k] == BENCH_STICK_BEND ? bend : m);
    }
    sb->resetLinkRestLengths(); // every link's rest length = its start length, as ours
    btSoftBody::Config &cfg = sb->m_cfg;
    cfg.piterations = c->iterations; // position (link) iterations = ours
    cfg.viterations = 0;
    cfg.diterations = 0;
    cfg.kDP = btScalar(c->damping); // velocity fraction removed per step
    cfg.kDF = 1;                    // x each body's friction, set to our pair mix above
    cfg.kCHR = 1; // contact hardness against dynamic bodies (default 1): full projection
    cfg.kKHR = 1; // ... against static and kinematic ones (default 0.1: soft)
    cfg.kDG = 0, cfg.kLF = 0, cfg.kPR = 0, cfg.kVC = 0;
    cfg.collisions = btSoftBody::fCollision::SDF_RS; // nodes vs rigid signed distance (default)
    sb->getCollisionShape()->setMargin(btScalar(c->radius > 0 ? c->radius : 0.005));
    sb->setActivationState(DISABLE_DEACTIVATION);
    w->world.addSoftBody(sb);
    return w;
}

void cloth_step(void *h)
{
    auto *w = static_cast<SoftWorld *>(h);
    w->world.stepSimulation(w->dt, 0);                    // maxSubSteps 0: exactly one step of dt
    w->world.getWorldInfo().m_sparsesdf.GarbageCollect(); // as Bullet's SoftDemo, per frame
}

void cloth_positions(void *h, double *xyz)
{
    auto *w = static_cast<SoftWorld *>(h);
    const btSoftBody *sb = w->cloth.get();
    for (int k = 0; k < sb->m_nodes.size(); k++) {
        const btVector3 &p = sb->m_nodes[k].m_x;
        *xyz++ = double(p.x()), *xyz++ = double(p.y()), *xyz++ = double(p.z());
    }
}

bench_cloth_counts cloth_counts(void *h)
{
    auto *w = static_cast<SoftWorld *>(h);
    return bench_cloth_counts{uint32_t(w->cloth->m_nodes.size()),
                              uint32_t(w->cloth->m_links.size())};
}

void cloth_destroy(void *h)
{
    delete static_cast<SoftWorld *>(h);
}

} // namespace

int main(int argc, char **argv)
{
    static const bench_cloth_engine e = {
        "bullet",        "3.24 btSoftBody", "float",      1, cloth_create, cloth_step,
        cloth_positions, cloth_counts,      cloth_destroy};
    return bench_cloth_main(&e, argc, argv);
}
