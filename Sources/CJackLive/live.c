// `drummer play`'s real-time half: see include/drummer_live.h.
//
// The clock. Events carry ticks (the model's PPQ) from the first bar line. While playing, the
// callback maps a tick t to the absolute frame anchor_frame + (t - anchor_tick)·fpt (fpt =
// frames per tick) and writes each event due in the period at its own frame. A tempo change
// (transport's) re-anchors at the player's next bar line; transport starting places the
// player's next bar line on transport's next one; transport stopping pauses the player at its
// next bar line (every sounding note off) until transport rolls again.
#define _GNU_SOURCE
#include "drummer_live.h"

#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// ---- libjack, loaded at run time -----------------------------------------------------------

// jack_position_t (jack/types.h), declared here so that building drummer needs no JACK headers;
// checked against them where they are installed.
typedef struct __attribute__((__packed__)) {
    uint64_t unique_1;
    uint64_t usecs;
    uint32_t frame_rate;
    uint32_t frame;
    int32_t valid;
    int32_t bar, beat, tick;
    double bar_start_tick;
    float beats_per_bar, beat_type;
    double ticks_per_beat, beats_per_minute;
    double frame_time, next_time;
    uint32_t bbt_offset;
    float audio_frames_per_video_frame;
    uint32_t video_offset;
    double tick_double;
    int32_t padding[5];
    uint64_t unique_2;
} live_position;

#define LIVE_POSITION_BBT 0x10
#define LIVE_TRANSPORT_ROLLING 1

#if __has_include(<jack/types.h>)
#include <jack/types.h>
#include <jack/midiport.h>
_Static_assert(sizeof(live_position) == sizeof(jack_position_t), "jack_position_t layout");
_Static_assert(offsetof(live_position, beats_per_minute) == offsetof(jack_position_t, beats_per_minute), "jack_position_t layout");
_Static_assert(offsetof(live_position, valid) == offsetof(jack_position_t, valid), "jack_position_t layout");
_Static_assert(sizeof(drummer_jack_midi_event) == sizeof(jack_midi_event_t), "jack_midi_event_t layout");
_Static_assert(LIVE_POSITION_BBT == JackPositionBBT && LIVE_TRANSPORT_ROLLING == JackTransportRolling, "JACK constants");
_Static_assert(DRUMMER_JACK_PORT_INPUT == JackPortIsInput && DRUMMER_JACK_PORT_OUTPUT == JackPortIsOutput, "JACK constants");
_Static_assert(DRUMMER_JACK_NO_START_SERVER == JackNoStartServer && DRUMMER_JACK_SERVER_NAME == JackServerName, "JACK constants");
#endif

static drummer_jack_api jack_api;
static atomic_int jack_loaded;

static void quiet(const char *message) { (void)message; }

int drummer_live_load_library(char *error, size_t size) {
    if (atomic_load(&jack_loaded)) return 0;
    void *lib = dlopen(DRUMMER_LIVE_LIBJACK, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(error, size,
                 "drummer play needs the JACK client library %s, which is not installed (%s); on Debian: "
                 "apt-get install %s (and jackd2 for a server)",
                 DRUMMER_LIVE_LIBJACK, dlerror(), DRUMMER_LIVE_LIBJACK_PACKAGE);
        return -1;
    }
    drummer_jack_api a;
    struct { void **slot; const char *name; } table[] = {
        {(void **)&a.client_open, "jack_client_open"},
        {(void **)&a.client_close, "jack_client_close"},
        {(void **)&a.activate, "jack_activate"},
        {(void **)&a.deactivate, "jack_deactivate"},
        {(void **)&a.port_register, "jack_port_register"},
        {(void **)&a.port_name, "jack_port_name"},
        {(void **)&a.connect, "jack_connect"},
        {(void **)&a.set_process_callback, "jack_set_process_callback"},
        {(void **)&a.on_info_shutdown, "jack_on_info_shutdown"},
        {(void **)&a.set_xrun_callback, "jack_set_xrun_callback"},
        {(void **)&a.get_sample_rate, "jack_get_sample_rate"},
        {(void **)&a.get_buffer_size, "jack_get_buffer_size"},
        {(void **)&a.last_frame_time, "jack_last_frame_time"},
        {(void **)&a.port_get_buffer, "jack_port_get_buffer"},
        {(void **)&a.midi_get_event_count, "jack_midi_get_event_count"},
        {(void **)&a.midi_event_get, "jack_midi_event_get"},
        {(void **)&a.midi_clear_buffer, "jack_midi_clear_buffer"},
        {(void **)&a.midi_event_write, "jack_midi_event_write"},
        {(void **)&a.transport_query, "jack_transport_query"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].slot = dlsym(lib, table[i].name);
        if (!*table[i].slot) {
            snprintf(error, size, "%s has no function %s: a JACK client library of another kind? (%s)",
                     DRUMMER_LIVE_LIBJACK, table[i].name, DRUMMER_LIVE_LIBJACK_PACKAGE);
            dlclose(lib);
            return -1;
        }
    }
    // libjack's own messages ("Cannot connect to server socket…") would bury the player's
    // sentence: it says what went wrong itself.
    void (*set_error_fn)(void (*)(const char *)) = (void (*)(void (*)(const char *)))dlsym(lib, "jack_set_error_function");
    void (*set_info_fn)(void (*)(const char *)) = (void (*)(void (*)(const char *)))dlsym(lib, "jack_set_info_function");
    if (set_error_fn) set_error_fn(quiet);
    if (set_info_fn) set_info_fn(quiet);
    jack_api = a;
    atomic_store(&jack_loaded, 1);
    return 0;
}

const drummer_jack_api *drummer_jack(void) { return atomic_load(&jack_loaded) ? &jack_api : NULL; }

// ---- The player ----------------------------------------------------------------------------

#define OUT_CAPACITY 8192u   // events: far more than the densest bar's NOTE ONs and OFFs
#define IN_CAPACITY 1024u    // hits heard and not yet read
#define HEARD_PER_PERIOD 64  // more NOTE ONs than this in one period are a flood: dropped

struct drummer_live {
    void *client, *out_port, *in_port;
    int ppq, bar_ticks, follow_transport;
    double sample_rate;

    // Output ring: the sampler's thread writes head, the callback tail.
    drummer_live_event out_ring[OUT_CAPACITY];
    _Atomic uint32_t out_head, out_tail;
    // Input ring: the callback writes head, the sampler's thread tail.
    drummer_live_heard in_ring[IN_CAPACITY];
    _Atomic uint32_t in_head, in_tail;

    // Requests and results shared with the other threads.
    _Atomic double free_fpt;  // frames per tick at --bpm
    atomic_int start_requested, stop_requested, finished, server_gone, thru;
    _Atomic uint32_t epoch;
    _Atomic double playhead;
    _Atomic double clock_fpt;  // the clock's frames per tick, for the status
    _Atomic int64_t first_bar_frame;
    char gone_reason[256];

    // Counters.
    _Atomic uint64_t periods, xruns, written, late, output_full, heard, other_channel, sysex, malformed, other,
        dropped, underruns;
    atomic_int transport_now, paused_now;

    // The callback's own state.
    int started;           // the clock runs (or waits for its anchor)
    int in_transport;      // following transport
    int paused;            // waiting for transport to roll again, at pause_tick
    int pending_pause;     // pause at the next bar line
    int pending_sync;      // place the next bar line on transport's next one
    double anchor_frame, anchor_tick, fpt, pending_fpt;
    double pause_tick;
    int64_t frame;         // absolute frame of the period's start (64-bit)
    uint32_t last_frame32;
    int have_frame;
    uint32_t seen_epoch;   // the epoch whose events it plays
    uint8_t sounding[128]; // drum-channel notes on
    // A note whose NOTE ON went out late keeps its length: its NOTE OFF goes out as late (frames
    // late_by[n]), in a later period if need be (due at the absolute frame off_frame[n] then).
    double late_by[128], off_frame[128];
    uint8_t off_pending[128];
    double on_frame[128];  // the absolute frame its NOTE ON went out at
    uint32_t cursor;       // the period's last written offset: JACK refuses an earlier one
};

// Writes one event at `offset` of the period, or at the period's last written offset when that
// is later: JACK takes a period's events in time order only, and refuses (EINVAL) one written
// before an earlier write's time; a NOTE OFF or All Notes Off refused so left notes sounding.
static int write_event(drummer_live *l, void *out, uint32_t offset, const uint8_t *bytes, size_t size) {
    if (offset < l->cursor) offset = l->cursor;
    int r = jack_api.midi_event_write(out, offset, bytes, size);
    if (r == 0) l->cursor = offset;
    return r;
}

static void set_error(char *error, size_t size, const char *text) { snprintf(error, size, "%s", text); }

// Frames per tick at `bpm` quarter notes per minute.
static double frames_per_tick(double sample_rate, double bpm, int ppq) { return sample_rate * 60.0 / (bpm * ppq); }

static double tick_at(const drummer_live *l, double frame) { return l->anchor_tick + (frame - l->anchor_frame) / l->fpt; }
static double frame_at(const drummer_live *l, double tick) { return l->anchor_frame + (tick - l->anchor_tick) * l->fpt; }

// Transport's tempo (as frames per model tick) and the absolute frame of its next bar line
// (the period's first frame when it starts on one); 0 when transport is not rolling with BBT.
static int transport_bar(drummer_live *l, double *fpt, double *next_bar) {
    if (!l->follow_transport) return 0;
    live_position pos;
    memset(&pos, 0, sizeof pos);
    int state = jack_api.transport_query(l->client, &pos);
    if (state != LIVE_TRANSPORT_ROLLING || !(pos.valid & LIVE_POSITION_BBT)) return 0;
    if (!(pos.beats_per_minute > 0) || !(pos.ticks_per_beat > 0) || !(pos.beats_per_bar > 0)) return 0;
    double beat_type = pos.beat_type > 0 ? pos.beat_type : 4;
    double frames_per_beat = l->sample_rate * 60.0 / pos.beats_per_minute;
    // A transport beat of type 8 is an eighth: the model's quarter is 4/beat_type beats.
    *fpt = frames_per_beat * (beat_type / 4.0) / l->ppq;
    double in_bar = (pos.beat - 1) + pos.tick / pos.ticks_per_beat;
    // A timebase master's position is not always a place in a bar (jack_transport's, after a
    // relocation, said beat 5 of 4 and tick 32767 of 1920): its next bar line is then taken
    // within a bar from here. Past the bar's end, it fell in the past, and the player, starting
    // there, played everything it had queued at once.
    if (!(in_bar >= 0)) in_bar = 0;
    in_bar = fmod(in_bar, pos.beats_per_bar);
    double to_next = in_bar <= 0 ? 0 : (pos.beats_per_bar - in_bar) * frames_per_beat;
    // A bar line on a frame: the first bar's frame the player announces is then exact, and each
    // note lies within half a frame of its tick's place from it.
    *next_bar = floor((double)l->frame + to_next + 0.5);
    return 1;
}

// Note n sounds from the absolute frame `at` (its NOTE ON written `late` frames after its
// frame), or no longer sounds.
static void note_on_written(drummer_live *l, int n, double at, double late) {
    l->sounding[n] = 1;
    l->on_frame[n] = at;
    l->late_by[n] = late > 0 ? late : 0;
    l->off_pending[n] = 0;
}

static void note_off_written(drummer_live *l, int n) {
    l->sounding[n] = 0;
    l->late_by[n] = 0;
    l->off_pending[n] = 0;
}

// Note n's NOTE OFF at `offset` of the period (or after what was written there); 0 when written.
static int write_note_off(drummer_live *l, void *out, uint32_t offset, int n) {
    uint8_t off[3] = {0x89, (uint8_t)n, 0};
    if (write_event(l, out, offset, off, 3) != 0) {
        atomic_fetch_add(&l->output_full, 1);
        return -1;
    }
    note_off_written(l, n);
    atomic_fetch_add(&l->written, 1);
    return 0;
}

// The NOTE OFFs put off to a later period (a late note's) that are due before the absolute frame
// `before`, in time order; frames from `period_start`.
static void put_off_note_offs(drummer_live *l, void *out, double period_start, double before) {
    for (;;) {
        int next = -1;
        for (int n = 0; n < 128; n++) {
            if (l->off_pending[n] && l->off_frame[n] < before && (next < 0 || l->off_frame[n] < l->off_frame[next])) next = n;
        }
        if (next < 0) return;
        double offset = l->off_frame[next] - period_start;
        if (write_note_off(l, out, offset > 0 ? (uint32_t)offset : 0, next) != 0) return;
    }
}

// Every sounding note off, at `offset` of the period (or after what was written there).
static void note_offs(drummer_live *l, void *out, uint32_t offset) {
    for (int n = 0; n < 128; n++) {
        if (l->sounding[n]) write_note_off(l, out, offset, n);
    }
}

static void all_notes_off(drummer_live *l, void *out, uint32_t offset) {
    note_offs(l, out, offset);
    uint8_t cc[3] = {0xB9, 123, 0};  // All Notes Off on the drum channel
    if (write_event(l, out, offset, cc, 3) == 0) atomic_fetch_add(&l->written, 1);
}

// Writes the ring's events due before `end_frame` with tick < `limit_tick`; frames from
// `period_start`. Returns 1 when the END event was played.
static int play_due(drummer_live *l, void *out, double period_start, double end_frame, double limit_tick) {
    uint32_t tail = atomic_load_explicit(&l->out_tail, memory_order_relaxed);
    uint32_t head = atomic_load_explicit(&l->out_head, memory_order_acquire);
    int ended = 0;
    while (tail != head) {
        const drummer_live_event *e = &l->out_ring[tail % OUT_CAPACITY];
        if (e->epoch != l->seen_epoch) {  // drawn before the player changed course: dropped
            tail++;
            continue;
        }
        if ((double)e->tick >= limit_tick) break;
        double f = floor(frame_at(l, (double)e->tick) + 0.5);
        if (f >= end_frame) break;
        uint8_t kind = e->bytes[0] & 0xF0;
        int note_off = e->kind == DRUMMER_LIVE_MIDI && e->size == 3 && (kind == 0x80 || (kind == 0x90 && e->bytes[2] == 0));
        // A NOTE OFF of a note not sounding is not written: where the player stops for transport
        // or moves its bar line onto transport's, it ends every sounding note at that bar line
        // itself, and the NOTE OFFs the ring holds for those notes (due at the bar line or just
        // after it) would come out a second time where it starts again.
        if (note_off && !l->sounding[e->bytes[1] & 0x7F]) {
            tail++;
            continue;
        }
        int note = e->bytes[1] & 0x7F;
        int note_on = e->kind == DRUMMER_LIVE_MIDI && e->size == 3 && kind == 0x90 && e->bytes[2] > 0;
        // A late event goes out at the period's start. A NOTE OFF of a note whose NOTE ON went
        // out late is put off by as much (the note keeps its length: NOTE ON and NOTE OFF both
        // past due, it sounded for no time at all): it waits among the put-off NOTE OFFs, written
        // in time order between the ring's events, in a later period if it falls there. The
        // note struck again ends it there first: its next NOTE ON is not held back, so the
        // lateness does not carry on to the notes after it.
        if (f < period_start) atomic_fetch_add(&l->late, 1);
        if (note_off && l->late_by[note] > 0) {
            l->off_pending[note] = 1;
            l->off_frame[note] = f + l->late_by[note];
            tail++;
            continue;
        }
        double offset = f - period_start;
        if (offset < 0) offset = 0;
        if (offset < l->cursor) offset = l->cursor;
        put_off_note_offs(l, out, period_start, period_start + offset + 1);
        if (note_on && l->off_pending[note]) {
            // Its put-off NOTE OFF goes here, once the note has sounded a tick: struck again
            // late too, in the same period, it would sound for no time at all.
            double least = l->on_frame[note] + l->fpt - period_start;
            if (offset < least) {
                if (least >= end_frame - period_start) break;  // the rest next period
                offset = ceil(least);
            }
            if (write_note_off(l, out, (uint32_t)offset, note) != 0) break;
        }
        if (e->kind == DRUMMER_LIVE_END) {
            all_notes_off(l, out, (uint32_t)offset);
            ended = 1;
            tail++;
            break;
        }
        if (e->size >= 1 && e->size <= 3) {
            if (write_event(l, out, (uint32_t)offset, e->bytes, e->size) != 0) {
                atomic_fetch_add(&l->output_full, 1);
                break;  // the port's buffer is full: the rest next period
            }
            atomic_fetch_add(&l->written, 1);
            if (note_on) note_on_written(l, note, period_start + offset, period_start + offset - f);
            if (note_off) note_off_written(l, note);
        }
        tail++;
    }
    atomic_store_explicit(&l->out_tail, tail, memory_order_release);
    if (!ended && limit_tick == INFINITY) put_off_note_offs(l, out, period_start, end_frame);
    return ended;
}

// Hits on the input port: drum-channel NOTE ONs into the input ring; everything else counted.
static void listen(drummer_live *l, void *out, uint32_t nframes) {
    int thru = atomic_load(&l->thru);
    void *in = jack_api.port_get_buffer(l->in_port, nframes);
    if (!in) return;
    uint32_t count = jack_api.midi_get_event_count(in);
    int taken = 0;
    uint32_t head = atomic_load_explicit(&l->in_head, memory_order_relaxed);
    for (uint32_t i = 0; i < count; i++) {
        drummer_jack_midi_event ev;
        if (jack_api.midi_event_get(&ev, in, i) != 0 || !ev.buffer || ev.size == 0) {
            atomic_fetch_add(&l->malformed, 1);
            continue;
        }
        uint8_t status = ev.buffer[0];
        if (status == 0xF0 || status == 0xF7) { atomic_fetch_add(&l->sysex, 1); continue; }
        if (status < 0x80) { atomic_fetch_add(&l->malformed, 1); continue; }  // running status / garbage
        uint8_t kind = status & 0xF0;
        // A NOTE OFF goes through for a note sounding only (its NOTE ON went out before it: one
        // not echoed goes out a period later through the ring, with its own NOTE OFF).
        if (thru && ev.size == 3 && (status == 0x89 || (status == 0x99 && ev.buffer[2] == 0)) && l->sounding[ev.buffer[1] & 0x7F]) {
            write_note_off(l, out, ev.time < nframes ? ev.time : nframes - 1, ev.buffer[1] & 0x7F);
        }
        if (kind == 0x80) continue;  // a NOTE OFF: nothing to read
        if (kind != 0x90) { atomic_fetch_add(&l->other, 1); continue; }
        if (ev.size < 3 || (ev.buffer[1] & 0x80) || (ev.buffer[2] & 0x80)) { atomic_fetch_add(&l->malformed, 1); continue; }
        if (ev.buffer[2] == 0) continue;  // a NOTE OFF too
        if ((status & 0x0F) != 9) { atomic_fetch_add(&l->other_channel, 1); continue; }
        uint32_t tail = atomic_load_explicit(&l->in_tail, memory_order_acquire);
        if (taken >= HEARD_PER_PERIOD || head - tail >= IN_CAPACITY || !l->started || l->paused || !(l->fpt > 0)) {
            atomic_fetch_add(&l->dropped, 1);
            continue;
        }
        uint32_t t = ev.time < nframes ? ev.time : nframes - 1;
        double frame = (double)l->frame + t;
        drummer_live_heard *h = &l->in_ring[head % IN_CAPACITY];
        h->frame = l->frame + t;
        h->tick = (int64_t)floor(tick_at(l, frame) + 0.5);
        h->note = ev.buffer[1];
        h->velocity = ev.buffer[2];
        h->echoed = 0;
        // Struck again before a NOTE OFF put off (a late note's): that NOTE OFF first.
        if (thru && l->off_pending[ev.buffer[1]]) write_note_off(l, out, t, ev.buffer[1]);
        if (thru && write_event(l, out, t, ev.buffer, 3) == 0) {
            note_on_written(l, ev.buffer[1], frame, 0);
            h->echoed = 1;
            atomic_fetch_add(&l->written, 1);
        }
        head++;
        taken++;
        atomic_fetch_add(&l->heard, 1);
    }
    atomic_store_explicit(&l->in_head, head, memory_order_release);
}

static int process_period(uint32_t nframes, void *arg) {
    drummer_live *l = arg;
    uint32_t f32 = jack_api.last_frame_time(l->client);
    if (!l->have_frame) {
        l->frame = f32;
        l->have_frame = 1;
    } else {
        l->frame += (uint32_t)(f32 - l->last_frame32);
    }
    l->last_frame32 = f32;
    atomic_fetch_add(&l->periods, 1);
    void *out = jack_api.port_get_buffer(l->out_port, nframes);
    if (!out) return 0;
    jack_api.midi_clear_buffer(out);
    l->cursor = 0;
    double start = (double)l->frame, end = start + nframes;

    if (atomic_load(&l->finished)) return 0;
    if (atomic_load(&l->stop_requested)) {
        all_notes_off(l, out, 0);
        atomic_store(&l->finished, 1);
        return 0;
    }
    double t_fpt = 0, t_bar = 0;
    int rolling = transport_bar(l, &t_fpt, &t_bar);

    if (!l->started) {
        if (!atomic_load(&l->start_requested)) {
            listen(l, out, nframes);  // counted: heard before the start
            return 0;
        }
        {
            l->started = 1;
            l->anchor_tick = 0;
            if (rolling) {
                l->in_transport = 1;
                l->fpt = t_fpt;
                l->anchor_frame = t_bar;
            } else {
                l->fpt = atomic_load(&l->free_fpt);
                l->anchor_frame = start;
            }
            l->pending_fpt = l->fpt;
            atomic_store(&l->first_bar_frame, (int64_t)l->anchor_frame);
        }
    }

    if (l->paused) {
        if (rolling) {  // transport rolls again: the paused bar line on its next one
            l->paused = 0;
            l->in_transport = 1;
            l->fpt = l->pending_fpt = t_fpt;
            l->anchor_tick = l->pause_tick;
            l->anchor_frame = t_bar;
        } else {
            listen(l, out, nframes);
            atomic_store(&l->paused_now, 1);
            return 0;
        }
    }
    atomic_store(&l->paused_now, 0);
    uint32_t epoch = atomic_load(&l->epoch);
    if (epoch != l->seen_epoch) {  // a change of course: what sounded of the old one ends
        note_offs(l, out, 0);
        l->seen_epoch = epoch;
    }

    // What happens at the player's next bar line, seen from this period.
    if (l->in_transport) {
        l->pending_pause = !rolling;
        if (rolling) l->pending_fpt = t_fpt;
    } else if (rolling) {
        l->pending_sync = 1;
        l->pending_fpt = t_fpt;
    }

    // The player's next bar line (this one when the period starts on it; the first before it).
    double now_tick = tick_at(l, start);
    double next_bar = now_tick <= 0 ? 0 : ceil(now_tick / l->bar_ticks - 1e-6) * l->bar_ticks;
    double bar_frame = floor(frame_at(l, next_bar) + 0.5);
    int ended = 0;
    int change = l->pending_pause || l->pending_sync || l->pending_fpt != l->fpt;
    if (change && bar_frame < end && next_bar > 0) {
        // Up to the bar line with the old mapping, then the change.
        ended = play_due(l, out, start, end, next_bar);
        if (!ended) {
            // At the bar line (the notes of the bar before sound to it).
            uint32_t at_bar = bar_frame > start ? (uint32_t)(bar_frame - start) : 0;
            if (l->pending_pause) {
                note_offs(l, out, at_bar);
                l->paused = 1;
                l->pause_tick = next_bar;
                l->in_transport = 0;
                l->pending_pause = 0;
                listen(l, out, nframes);
                atomic_store(&l->playhead, next_bar);
                atomic_store(&l->transport_now, 0);
                return 0;
            }
            if (l->pending_sync) {
                // Silence until transport's first bar line at or after ours: nothing sounds over it.
                note_offs(l, out, at_bar);
                double tb = t_bar, bar_len = l->bar_ticks * t_fpt;
                while (tb < bar_frame - 0.5 && bar_len > 0) tb += bar_len;
                tb = floor(tb + 0.5);
                l->in_transport = 1;
                l->pending_sync = 0;
                l->anchor_frame = tb;
            } else {
                l->anchor_frame = bar_frame;
            }
            l->anchor_tick = next_bar;
            l->fpt = l->pending_fpt;
        }
    }
    atomic_store(&l->transport_now, l->in_transport);
    atomic_store(&l->clock_fpt, l->fpt);
    listen(l, out, nframes);
    if (!ended) ended = play_due(l, out, start, end, INFINITY);
    uint32_t queued = atomic_load(&l->out_head) - atomic_load(&l->out_tail);
    if (queued == 0 && !ended) atomic_fetch_add(&l->underruns, 1);
    if (ended) atomic_store(&l->finished, 1);
    double head_tick = tick_at(l, end);
    atomic_store(&l->playhead, head_tick > 0 ? head_tick : 0);
    return 0;
}

// Defined only by the allocation counter the tests preload (Scripts/malloc-count.c), which counts
// the allocations made between them: none may be made in the callback. Elsewhere both are absent
// (weak references, null) and the callback costs one test of each.
extern void drummer_live_callback_enter(void) __attribute__((weak));
extern void drummer_live_callback_leave(void) __attribute__((weak));

static int process(uint32_t nframes, void *arg) {
    if (drummer_live_callback_enter) drummer_live_callback_enter();
    int status = process_period(nframes, arg);
    if (drummer_live_callback_leave) drummer_live_callback_leave();
    return status;
}

static int on_xrun(void *arg) {
    drummer_live *l = arg;
    atomic_fetch_add(&l->xruns, 1);
    return 0;
}

// Called by libjack on its own thread when the server shuts the client down.
static void on_shutdown(int code, const char *reason, void *arg) {
    (void)code;
    drummer_live *l = arg;
    snprintf(l->gone_reason, sizeof l->gone_reason, "%s", reason ? reason : "no reason given");
    atomic_store(&l->server_gone, 1);
}

drummer_live *drummer_live_open(const char *client_name, const char *server_name, int ppq, int bar_ticks,
                                double bpm, int follow_transport, char *error, size_t size) {
    if (drummer_live_load_library(error, size) != 0) return NULL;
    if (ppq <= 0 || bar_ticks <= 0 || !(bpm > 0)) {
        set_error(error, size, "bad clock settings");
        return NULL;
    }
    drummer_live *l = calloc(1, sizeof *l);
    if (!l) {
        set_error(error, size, "out of memory");
        return NULL;
    }
    // The rings are hundreds of kilobytes of fresh zero pages: the callback must not be the first
    // to touch one (a page fault waits for the process's memory map, which the sampler's thread
    // may hold while it maps or unmaps an allocation, and the period is missed). Locked in memory
    // where the limit allows, else each page written once here.
    if (mlock(l, sizeof *l) != 0) {
        volatile unsigned char *bytes = (volatile unsigned char *)l;
        for (size_t i = 0; i < sizeof *l; i += 4096) bytes[i] = 0;
    }
    int status = 0;
    int options = DRUMMER_JACK_NO_START_SERVER | (server_name ? DRUMMER_JACK_SERVER_NAME : 0);
    l->client = server_name ? jack_api.client_open(client_name, options, &status, server_name)
                            : jack_api.client_open(client_name, options, &status);
    if (!l->client) {
        const char *which = server_name ? server_name : (getenv("JACK_DEFAULT_SERVER") ? getenv("JACK_DEFAULT_SERVER") : "default");
        if (status & 0x10)  // JackServerFailed
            snprintf(error, size, "no JACK server \"%s\" is running (start one with jackd, or PipeWire's JACK; --server NAME picks another)", which);
        else
            snprintf(error, size, "could not open a JACK client on server \"%s\" (jack_client_open status 0x%x)", which, status);
        free(l);
        return NULL;
    }
    l->ppq = ppq;
    l->bar_ticks = bar_ticks;
    l->follow_transport = follow_transport;
    l->sample_rate = jack_api.get_sample_rate(l->client);
    atomic_store(&l->free_fpt, frames_per_tick(l->sample_rate, bpm, ppq));
    atomic_store(&l->first_bar_frame, -1);
    l->out_port = jack_api.port_register(l->client, "out", DRUMMER_JACK_MIDI_TYPE, DRUMMER_JACK_PORT_OUTPUT, 0);
    l->in_port = jack_api.port_register(l->client, "in", DRUMMER_JACK_MIDI_TYPE, DRUMMER_JACK_PORT_INPUT, 0);
    if (!l->out_port || !l->in_port) {
        set_error(error, size, "could not register the MIDI ports (jack_port_register)");
        jack_api.client_close(l->client);
        free(l);
        return NULL;
    }
    jack_api.set_process_callback(l->client, process, l);
    jack_api.set_xrun_callback(l->client, on_xrun, l);
    jack_api.on_info_shutdown(l->client, on_shutdown, l);
    return l;
}

void drummer_live_close(drummer_live *l) {
    if (!l) return;
    // After the server has gone, libjack's calls may wait on a dead socket: leave the client.
    if (!atomic_load(&l->server_gone)) {
        jack_api.deactivate(l->client);
        jack_api.client_close(l->client);
        free(l);
    }
}

int drummer_live_activate(drummer_live *l, char *error, size_t size) {
    if (jack_api.activate(l->client) != 0) {
        set_error(error, size, "could not activate the JACK client (jack_activate)");
        return -1;
    }
    return 0;
}

int drummer_live_connect(drummer_live *l, const char *port, int output, char *error, size_t size) {
    const char *ours = jack_api.port_name(output ? l->out_port : l->in_port);
    int r = output ? jack_api.connect(l->client, ours, port) : jack_api.connect(l->client, port, ours);
    if (r != 0 && r != 17) {  // EEXIST: already connected
        snprintf(error, size, "could not connect %s %s %s (jack_connect): is there such a MIDI %s port? (jack_lsp lists them)",
                 output ? ours : port, "to", output ? port : ours, output ? "input" : "output");
        return -1;
    }
    return 0;
}

const char *drummer_live_port_name(drummer_live *l, int output) { return jack_api.port_name(output ? l->out_port : l->in_port); }
uint32_t drummer_live_sample_rate(drummer_live *l) { return (uint32_t)l->sample_rate; }
uint32_t drummer_live_buffer_size(drummer_live *l) { return jack_api.get_buffer_size(l->client); }

int drummer_live_push(drummer_live *l, const drummer_live_event *e) {
    uint32_t head = atomic_load_explicit(&l->out_head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&l->out_tail, memory_order_acquire);
    if (head - tail >= OUT_CAPACITY) return 0;
    l->out_ring[head % OUT_CAPACITY] = *e;
    atomic_store_explicit(&l->out_head, head + 1, memory_order_release);
    return 1;
}

int drummer_live_pop_heard(drummer_live *l, drummer_live_heard *out) {
    uint32_t tail = atomic_load_explicit(&l->in_tail, memory_order_relaxed);
    uint32_t head = atomic_load_explicit(&l->in_head, memory_order_acquire);
    if (tail == head) return 0;
    *out = l->in_ring[tail % IN_CAPACITY];
    atomic_store_explicit(&l->in_tail, tail + 1, memory_order_release);
    return 1;
}

void drummer_live_start(drummer_live *l) { atomic_store(&l->start_requested, 1); }
void drummer_live_set_epoch(drummer_live *l, uint32_t epoch) { atomic_store(&l->epoch, epoch); }
void drummer_live_set_thru(drummer_live *l, int on) { atomic_store(&l->thru, on != 0); }
double drummer_live_playhead(drummer_live *l) { return atomic_load(&l->playhead); }
int64_t drummer_live_first_bar_frame(drummer_live *l) { return atomic_load(&l->first_bar_frame); }
void drummer_live_stop(drummer_live *l) { atomic_store(&l->stop_requested, 1); }
int drummer_live_finished(drummer_live *l) { return atomic_load(&l->finished); }

void drummer_live_abandon(drummer_live *l, const char *reason) {
    if (atomic_load(&l->server_gone)) return;
    snprintf(l->gone_reason, sizeof l->gone_reason, "%s", reason ? reason : "abandoned");
    atomic_store(&l->server_gone, 1);
}

int drummer_live_server_gone(drummer_live *l, char *reason, size_t size) {
    if (!atomic_load(&l->server_gone)) return 0;
    if (reason && size) snprintf(reason, size, "%s", l->gone_reason);
    return 1;
}

void drummer_live_get_status(drummer_live *l, drummer_live_status *s) {
    s->periods = atomic_load(&l->periods);
    s->xruns = atomic_load(&l->xruns);
    s->written = atomic_load(&l->written);
    s->late = atomic_load(&l->late);
    s->output_full = atomic_load(&l->output_full);
    s->heard = atomic_load(&l->heard);
    s->other_channel = atomic_load(&l->other_channel);
    s->sysex = atomic_load(&l->sysex);
    s->malformed = atomic_load(&l->malformed);
    s->other = atomic_load(&l->other);
    s->dropped = atomic_load(&l->dropped);
    s->underruns = atomic_load(&l->underruns);
    s->transport = atomic_load(&l->transport_now);
    s->paused = atomic_load(&l->paused_now);
    s->frames_per_tick = atomic_load(&l->clock_fpt);
}

static volatile sig_atomic_t caught;

static void on_signal(int sig) { caught = sig; }

void drummer_live_catch_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    const int stops[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
        struct sigaction old;
        // A signal ignored when the player starts (SIGHUP under nohup) stays ignored.
        if (sigaction(stops[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(stops[k], &sa, NULL);
    }
}

int drummer_live_caught_signal(void) { return caught; }
