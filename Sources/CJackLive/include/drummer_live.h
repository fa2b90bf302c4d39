#ifndef DRUMMER_LIVE_H
#define DRUMMER_LIVE_H
// `drummer play`'s real-time half, in C: libjack loaded with dlopen at run time (never linked,
// so the rest of drummer runs without JACK), a JACK client with one MIDI output and one MIDI
// input port, and its process callback. The callback never allocates, locks, blocks or does
// I/O: it reads timed events from a single-producer single-consumer ring that the sampler's
// thread fills a bar or more ahead, writes each at its own frame, and puts the hits it hears
// into a second ring the other way. The clock is musical: events carry model ticks from the
// first bar line; the callback maps ticks to frames (its own tempo, or JACK transport's, a
// change taking effect at the next bar line).
//
// Threads: the process callback is the only consumer of the output ring and the only producer
// of the input ring; one other thread (the sampler's) is the producer and the consumer of
// those. Everything else they share is an atomic.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The shared object `drummer play` loads, and the Debian package that holds it.
#define DRUMMER_LIVE_LIBJACK "libjack.so.0"
#define DRUMMER_LIVE_LIBJACK_PACKAGE "libjack-jackd2-0"

/// Loads libjack (once per process) and resolves the functions the player uses.
/// 0 on success; else -1 with a sentence in `error`.
int drummer_live_load_library(char *error, size_t size);

/// What an output event is.
enum {
    DRUMMER_LIVE_MIDI = 0,  /// a MIDI message of `size` bytes
    DRUMMER_LIVE_END = 1,   /// the end of the performance: every sounding note off, then finished
};

/// One timed event of the output ring: `tick` in model ticks from the first bar line. An event
/// of an epoch other than the player's current one is dropped unplayed.
typedef struct {
    int64_t tick;
    uint8_t kind;
    uint8_t size;
    uint8_t bytes[3];
    uint32_t epoch;
} drummer_live_event;

/// One hit heard on the input port: a NOTE ON on the drum channel, at `tick` (model ticks from
/// the first bar line, rounded to the nearest) and absolute `frame`.
typedef struct {
    int64_t tick;
    int64_t frame;
    uint8_t note;
    uint8_t velocity;
    uint8_t echoed;  /// 1 when it also went out on the output (drummer_live_set_thru)
} drummer_live_heard;

/// Counters, read at any time (each an atomic snapshot).
typedef struct {
    uint64_t periods;
    uint64_t xruns;
    uint64_t written;        /// MIDI events written on the output port
    uint64_t late;           /// events written at the period's first frame, their own frame past
    uint64_t output_full;    /// writes the port's buffer refused (retried next period)
    uint64_t heard;          /// drum-channel NOTE ONs passed to the sampler
    uint64_t other_channel;  /// NOTE ONs on other channels (ignored)
    uint64_t sysex;          /// system exclusive messages (ignored)
    uint64_t malformed;      /// truncated or malformed events (ignored)
    uint64_t other;          /// other messages: controllers, clock… (NOTE OFFs are not counted)
    uint64_t dropped;        /// hits past the per-period limit or a full ring (ignored)
    uint64_t underruns;      /// periods that found the output ring empty while playing
    int32_t transport;       /// 1 while the clock follows JACK transport
    int32_t paused;          /// 1 while the clock waits for transport to roll
    double frames_per_tick;  /// the clock's tempo now, as frames per tick (0 before it starts)
} drummer_live_status;

typedef struct drummer_live drummer_live;

/// Opens a client named `client_name` on `server_name` (NULL: JACK_DEFAULT_SERVER or the
/// default), registers the ports "out" and "in", and sets the callbacks; not yet active.
/// `ppq` and `bar_ticks` are the model's; `bpm` the tempo while transport does not roll;
/// `follow_transport` 0 ignores transport. NULL on failure, with a sentence in `error`.
drummer_live *drummer_live_open(const char *client_name, const char *server_name, int ppq, int bar_ticks,
                                double bpm, int follow_transport, char *error, size_t size);
/// Deactivates and closes the client (unless the server has gone) and frees the player.
void drummer_live_close(drummer_live *live);

int drummer_live_activate(drummer_live *live, char *error, size_t size);
/// Connects the output port to `port` (output 1) or `port` to the input port (output 0).
int drummer_live_connect(drummer_live *live, const char *port, int output, char *error, size_t size);
/// The full names of the ports ("drummer:out"); valid while the player lives.
const char *drummer_live_port_name(drummer_live *live, int output);
uint32_t drummer_live_sample_rate(drummer_live *live);
uint32_t drummer_live_buffer_size(drummer_live *live);

/// Producer side of the output ring: 1 if pushed, 0 if full. Events must come in tick order.
int drummer_live_push(drummer_live *live, const drummer_live_event *event);
/// Consumer side of the input ring: 1 with a hit in `out`, 0 when empty.
int drummer_live_pop_heard(drummer_live *live, drummer_live_heard *out);

/// Starts the clock: at the next period (or the next transport bar line when transport rolls).
void drummer_live_start(drummer_live *live);
/// The musical time at the end of the last period, in ticks (0 before the start).
double drummer_live_playhead(drummer_live *live);
/// The absolute frame of the first bar line (-1 before it is known).
int64_t drummer_live_first_bar_frame(drummer_live *live);
/// Stops now: every sounding note gets its NOTE OFF and the drum channel an All Notes Off in
/// the next period, then the player is finished.
void drummer_live_stop(drummer_live *live);
/// Drops every queued event of an earlier epoch (and ends every sounding note) from the next
/// period on; events pushed afterwards carry `epoch`.
void drummer_live_set_epoch(drummer_live *live, uint32_t epoch);
/// 1: the drum-channel NOTE ONs and OFFs heard are also played on the output, at their frames.
void drummer_live_set_thru(drummer_live *live, int on);
/// 1 once the END event or a stop has been played.
int drummer_live_finished(drummer_live *live);
/// 1 once the server has shut the client down; `reason` (may be NULL) gets its words.
int drummer_live_server_gone(drummer_live *live, char *reason, size_t size);
/// Marks the server gone for `reason` (a server that runs no process cycle: frozen, not
/// exited), so that closing leaves the client instead of waiting on libjack for ever.
void drummer_live_abandon(drummer_live *live, const char *reason);
void drummer_live_get_status(drummer_live *live, drummer_live_status *out);

/// SIGINT, SIGTERM and SIGHUP (the terminal closing) set a flag instead of ending the process,
/// but for one ignored when this is called (SIGHUP under nohup); the number of the last one
/// caught (0: none).
void drummer_live_catch_signals(void);
int drummer_live_caught_signal(void);

// ---- The loaded libjack, for test clients that use the same loader -------------------------

typedef struct { uint32_t time; size_t size; uint8_t *buffer; } drummer_jack_midi_event;

typedef struct {
    void *(*client_open)(const char *name, int options, int *status, ...);
    int (*client_close)(void *client);
    int (*activate)(void *client);
    int (*deactivate)(void *client);
    void *(*port_register)(void *client, const char *name, const char *type, unsigned long flags,
                           unsigned long buffer_size);
    const char *(*port_name)(const void *port);
    int (*connect)(void *client, const char *source, const char *destination);
    int (*set_process_callback)(void *client, int (*cb)(uint32_t nframes, void *arg), void *arg);
    void (*on_info_shutdown)(void *client, void (*cb)(int code, const char *reason, void *arg), void *arg);
    int (*set_xrun_callback)(void *client, int (*cb)(void *arg), void *arg);
    uint32_t (*get_sample_rate)(void *client);
    uint32_t (*get_buffer_size)(void *client);
    uint32_t (*last_frame_time)(const void *client);
    void *(*port_get_buffer)(void *port, uint32_t nframes);
    uint32_t (*midi_get_event_count)(void *buffer);
    int (*midi_event_get)(drummer_jack_midi_event *event, void *buffer, uint32_t index);
    void (*midi_clear_buffer)(void *buffer);
    int (*midi_event_write)(void *buffer, uint32_t time, const uint8_t *data, size_t size);
    int (*transport_query)(const void *client, void *position);
} drummer_jack_api;

/// The functions, once drummer_live_load_library has succeeded (else NULL).
const drummer_jack_api *drummer_jack(void);

/// JackPortIsInput, JackPortIsOutput, JackNoStartServer, JackServerName, JACK_DEFAULT_MIDI_TYPE.
#define DRUMMER_JACK_PORT_INPUT 0x1
#define DRUMMER_JACK_PORT_OUTPUT 0x2
#define DRUMMER_JACK_NO_START_SERVER 0x01
#define DRUMMER_JACK_SERVER_NAME 0x04
#define DRUMMER_JACK_MIDI_TYPE "8 bit raw midi"

#ifdef __cplusplus
}
#endif
#endif
