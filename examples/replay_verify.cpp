// SPDX-License-Identifier: MIT
// A replay verifier in C++: open a .lsr recording of the reference push game,
// re-simulate every tick from the embedded scene and the recorded inputs, and
// compare each tick's checksum with the recorded one. Exit 0 when every tick
// matches, 3 at the first divergent tick, 1 when the file cannot be used.
//
// (docs/guide/replay.md shows the parts between the `// [name]` marks.)
//
//     c++ -std=c++17 replay_verify.cpp $(pkg-config --cflags --libs lockstep) -o replay_verify
#include <ls/game.h>
#include <ls/replay.h>
#include <ls/scene.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace
{

// RAII owners for the library's C objects.
struct reader_free {
    void operator()(ls_replay_reader *r) const
    {
        ls_replay_reader_destroy(r);
    }
};
struct cursor_free {
    void operator()(ls_replay_cursor *c) const
    {
        ls_replay_cursor_destroy(c);
    }
};
struct world_free {
    void operator()(ls_world *w) const
    {
        ls_world_destroy(w);
    }
};
struct scene_owner {
    ls_scene s{};
    ~scene_owner()
    {
        ls_scene_free(&s);
    }
};

int fail(const ls_error &err)
{
    char line[LS_ERROR_PATH_MAX + LS_ERROR_MESSAGE_MAX + 8];
    ls_error_format(&err, line, sizeof line);
    std::fprintf(stderr, "replay_verify: %s\n", line);
    return 1;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: replay_verify FILE.lsr\n");
        return 2;
    }
    // [open]
    ls_error err;
    std::unique_ptr<ls_replay_reader, reader_free> reader(ls_replay_reader_open(argv[1], &err));
    if (!reader) {
        return fail(err);
    }
    // The recording must come from a build whose bits this one reproduces.
    if (ls_replay_reader_require_fingerprint(reader.get(), ls_game_fingerprint(), &err) != LS_OK) {
        ls_error_set_path(&err, argv[1]);
        return fail(err);
    }
    const ls_replay_header *h = ls_replay_reader_header(reader.get());
    scene_owner scene;
    if (ls_scene_parse(reinterpret_cast<const char *>(h->scene), h->scene_size, &scene.s, &err) !=
        LS_OK) {
        ls_error_set_path(&err, "embedded scene");
        return fail(err);
    }
    std::unique_ptr<ls_world, world_free> world(ls_scene_instantiate(&scene.s, &err));
    std::unique_ptr<ls_replay_cursor, cursor_free> cursor(ls_replay_cursor_create(reader.get()));
    if (!world || !cursor) {
        return fail(err);
    }
    // [open]
    // [loop]
    const uint32_t ticks = ls_replay_reader_ticks(reader.get());
    for (uint32_t t = 0; t < ticks; t++) {
        const uint8_t *inputs = nullptr;
        uint64_t recorded = 0;
        if (ls_replay_cursor_read(cursor.get(), t, &inputs, &recorded) != LS_OK) {
            std::fprintf(stderr, "replay_verify: %s: cannot read tick %u\n", argv[1], t);
            return 1;
        }
        uint64_t computed = ls_game_tick(world.get(), &scene.s, inputs, h->players, h->input_size);
        if (computed != recorded) {
            std::printf("DESYNC at tick %u: recorded %016llx computed %016llx\n", t,
                        static_cast<unsigned long long>(recorded),
                        static_cast<unsigned long long>(computed));
            return 3;
        }
    }
    // [loop]
    std::printf("verified %u ticks, %u players, final checksum %016llx\n", ticks, h->players,
                static_cast<unsigned long long>(ls_world_checksum(world.get())));
    return 0;
}
