// SPDX-License-Identifier: MIT
/// @file
/// The reference games (SPEC.md §15): how a tick's input bytes move the
/// players, the rules that run after the step, and the bots. The scene's
/// `game` statement picks the rules: the push game (§15.1, the default) or car
/// soccer (§15.2). The replay recorder, the crosscheck runner and the network
/// bots all play through ls_game_tick, so a match recorded anywhere
/// re-simulates everywhere.
#ifndef LS_GAME_H
#define LS_GAME_H

#include "ls/rng.h"
#include "ls/scene.h"

LS_EXTERN_C_BEGIN

/// Push game: input bits of the first byte of a player's input (the other bytes are ignored).
enum {
    LS_INPUT_PUSH_XP = 1, ///< Push towards +x.
    LS_INPUT_PUSH_XN = 2, ///< Push towards -x.
    LS_INPUT_PUSH_ZP = 4, ///< Push towards +z.
    LS_INPUT_PUSH_ZN = 8, ///< Push towards -z.
};

/// Push force per direction bit, N (seed_000 §5.2: WASD pushes with 20 N at the centre).
#define LS_GAME_PUSH_NEWTONS 20

/// Apply one tick of inputs (player p's bytes at inputs + p * input_size); call
/// before ls_world_step. Push game: forces on the scene's player bodies. Soccer:
/// every player's vehicle controls (ls_soccer_controls_of; zero controls and full
/// brake during a kick-off countdown). Players beyond the scene's player count
/// are ignored. Returns LS_ERR_INVALID_ARGUMENT if input_size is 0.
LS_API ls_result ls_game_apply_inputs(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                                      uint32_t players, uint32_t input_size);

/// One tick of the game loop (SPEC.md §16.7): apply the tick's inputs (as
/// ls_game_apply_inputs; inputs may be NULL or players 0 for none), step the world,
/// run the scene's rules after the step (soccer: goals, kick-off, respawns; §15.2),
/// and return the checksum of the state after the tick, which peers compare and
/// replays record.
LS_API uint64_t ls_game_tick(ls_world *w, const ls_scene *scene, const uint8_t *inputs,
                             uint32_t players, uint32_t input_size);

/// The build fingerprint (SPEC.md §16.8): what a replay's bits depend on (number
/// format, libfixmath build, checksum, snapshot layout, game rules). Recorders write
/// it; verifiers require it (ls_replay_reader_require_fingerprint).
LS_API const char *ls_game_fingerprint(void);

/// Seeded scripted input stream: each player holds a direction and changes it on
/// average every 32 ticks, like a person holding keys.
typedef struct ls_input_script {
    ls_rng rng[LS_SCENE_MAX_PLAYERS];   ///< One stream per player (stream = player).
    uint8_t held[LS_SCENE_MAX_PLAYERS]; ///< Input byte each player holds now.
    uint32_t players;                   ///< Number of players (1..LS_SCENE_MAX_PLAYERS).
} ls_input_script;

/// Start a script for `players` players (clamped to 1..LS_SCENE_MAX_PLAYERS).
LS_API void ls_input_script_init(ls_input_script *s, uint64_t seed, uint32_t players);
/// Write the next tick's inputs: one byte per player, then input_size - 1 zero bytes each.
LS_API void ls_input_script_next(ls_input_script *s, uint8_t *out, uint32_t input_size);

/// Soccer: input bits of the first byte of a player's input (SPEC.md §15.2).
enum {
    LS_INPUT_THROTTLE = 1,    ///< Throttle +1 (with LS_INPUT_REVERSE: 0).
    LS_INPUT_REVERSE = 2,     ///< Throttle -1.
    LS_INPUT_STEER_LEFT = 4,  ///< Steer -1 (with LS_INPUT_STEER_RIGHT: 0).
    LS_INPUT_STEER_RIGHT = 8, ///< Steer +1.
    LS_INPUT_HANDBRAKE = 16,  ///< Handbrake on.
    LS_INPUT_BOOST = 32,      ///< Boost on.
};

/// Soccer: the game state words (ls_world_game_word) the rules keep (SPEC.md §15.2).
enum {
    LS_SOCCER_WORD_SCORE0 = 0,         ///< Goals of team 0 (players 0, 2, ...; attacks +z).
    LS_SOCCER_WORD_SCORE1 = 1,         ///< Goals of team 1 (players 1, 3, ...; attacks -z).
    LS_SOCCER_WORD_KICKOFF = 2,        ///< Ticks left of the kick-off countdown (inputs ignored).
    LS_SOCCER_WORD_LAST_GOAL_TICK = 3, ///< World tick after the step that scored the last goal.
    LS_SOCCER_WORD_LAST_GOAL_TEAM = 4, ///< Team that scored last + 1 (0: no goal yet).
    LS_SOCCER_WORD_BALL_RESETS = 5,    ///< Kick-offs without a goal (ball left the arena).
    LS_SOCCER_WORD_FLIPPED = 8,        ///< Words 8 + p: ticks player p's car has been stranded.
};

/// Soccer: ticks a car may stay stranded (upside down or on its side) before it is
/// put back on its wheels where it is.
#define LS_SOCCER_FLIP_TICKS 90
/// Soccer: a ball or car whose centre is below this height (m) has left the arena.
#define LS_SOCCER_FLOOR_Y (-20)

/// Soccer: the match state, read from the game words.
typedef struct ls_soccer_state {
    int32_t score[2];       ///< Goals per team.
    uint32_t kickoff;       ///< Ticks left of the kick-off countdown (0: playing).
    int32_t last_goal_tick; ///< World tick of the last goal (0 when none).
    int32_t last_goal_team; ///< Team of the last goal, -1 when none.
    uint32_t ball_resets;   ///< Kick-offs after the ball left the arena.
} ls_soccer_state;

/// Soccer: team of player p (p % 2). Team 0 attacks the goal at +z, team 1 the one at -z.
LS_API uint32_t ls_soccer_team(uint32_t player);
/// Soccer: goals of team 0 or 1 (0 for another team).
LS_API int32_t ls_soccer_score(const ls_world *w, uint32_t team);
/// Soccer: the whole match state.
LS_API ls_soccer_state ls_soccer_state_get(const ls_world *w);
/// Soccer: player p's vehicle (the one whose chassis is the body `player p`), or the
/// null id when there is none.
LS_API ls_vehicle_id ls_soccer_player_vehicle(const ls_world *w, const ls_scene *scene,
                                              uint32_t player);
/// Soccer: the vehicle controls an input byte asks for (SPEC.md §15.2).
LS_API ls_vehicle_controls ls_soccer_controls_of(uint8_t bits);
/// Soccer: kick-off reset: the ball and every player's chassis back on their scene
/// poses with zero velocity, controls released, the countdown word set to the
/// scene's kickoff_ticks. ls_game_tick calls it after a goal.
LS_API void ls_soccer_kickoff(ls_world *w, const ls_scene *scene);

/// Soccer bot: the state one bot keeps between ticks (not simulation state: only
/// the inputs it produces are sent and recorded).
typedef struct ls_soccer_bot {
    ls_rng rng;         ///< Jitter stream.
    uint32_t player;    ///< The player it drives.
    ls_fx aim_offset;   ///< Sideways aim offset behind the ball, m (re-drawn now and then).
    ls_fx approach;     ///< Distance behind the ball it lines up at, m.
    uint32_t stuck;     ///< Ticks it has asked to move but not moved.
    uint32_t reversing; ///< Ticks left of a reverse manoeuvre.
    uint8_t last;       ///< Last input byte.
} ls_soccer_bot;

/// Soccer bot: start a bot for `player`; bots with different seeds or players differ.
LS_API void ls_soccer_bot_init(ls_soccer_bot *bot, uint64_t seed, uint32_t player);
/// Soccer bot: the input byte for the next tick, from the world as it is now: drive
/// to a point behind the ball on the line from the opponents' goal, steer by the
/// sign of heading x target, reverse out when stuck, boost when lined up.
LS_API uint8_t ls_soccer_bot_input(ls_soccer_bot *bot, const ls_world *w, const ls_scene *scene);

LS_EXTERN_C_END

#endif
