// A JACK MIDI test client for PlayTests, on CJackLive's libjack loader:
//
//   JackProbe [--server NAME] [--name NAME] [--record FILE] [--from PORT]... [--send FILE --at FRAME]
//             [--flood] [--to PORT]... [--seconds S]
//
// --record: every event arriving on its port "in" (connected from each --from), written to FILE
//   at the end as lines "FRAME B0 B1 …" (FRAME absolute: the period's first frame + the event's
//   offset). --send: lines "OFFSET B0 B1 B2" of FILE, each sent on "out" (connected to each
//   --to) at the absolute frame FRAME + OFFSET. --flood: every period, as many events of every
//   kind (NOTE ONs on the other channels, drum-channel NOTE ONs of notes outside the drum map, sysex, truncated messages, stray data bytes,
//   controllers, clock) as the port's buffer takes. Prints "ready" once its ports are connected;
//   runs for S seconds (default 60) or until SIGINT/SIGTERM or the server goes.
#include "drummer_live.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct { int64_t frame; uint8_t size; uint8_t bytes[7]; } recorded;

static const drummer_jack_api *J;
static void *client, *in_port, *out_port;
static recorded *rec;
static _Atomic uint32_t rec_count;
static const uint32_t rec_capacity = 1u << 20;
static recorded *to_send;
static uint32_t send_count, send_next;
static int64_t send_at = -1;
static int flood;
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static volatile sig_atomic_t stop;
static atomic_int gone;

static uint32_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static void write_flood(void *out, uint32_t nframes) {
    for (int i = 0; i < 4000; i++) {
        uint8_t b[8];
        size_t n;
        uint32_t r = next_random();
        switch (r % 8) {
        case 0: case 1: b[0] = 0x90 | ((r >> 3 & 15) == 9 ? 0 : (r >> 3 & 15)); b[1] = r >> 7 & 127; b[2] = 1 + (r >> 14 & 126); n = 3; break;
        case 2: b[0] = 0x99; b[1] = (r >> 7 & 1) ? (r >> 8 & 15) : 100 + (r >> 8 & 27); b[2] = 1 + (r >> 14 & 126); n = 3; break;  // drum channel, notes outside the drum map
        case 3: b[0] = 0xF0; b[1] = 0x7E; b[2] = 0x01; b[3] = 0x02; b[4] = 0xF7; n = 5; break;
        case 4: b[0] = 0x99; b[1] = 0x24; n = 1 + (r >> 3 & 1); break;                 // truncated
        case 5: b[0] = 0x24; b[1] = 0x40; n = 2; break;                                // stray data bytes
        case 6: b[0] = 0xB0 | (r >> 3 & 15); b[1] = 7; b[2] = 100; n = 3; break;
        default: b[0] = 0xF8; n = 1; break;
        }
        // Offsets in order, as JACK requires within a period.
        if (J->midi_event_write(out, (uint32_t)((uint64_t)i * nframes / 4000), b, n) != 0) break;
    }
}

static int process(uint32_t nframes, void *arg) {
    (void)arg;
    int64_t start = J->last_frame_time(client);
    void *in = J->port_get_buffer(in_port, nframes);
    uint32_t count = J->midi_get_event_count(in);
    for (uint32_t i = 0; i < count; i++) {
        drummer_jack_midi_event ev;
        if (J->midi_event_get(&ev, in, i) != 0) continue;
        uint32_t k = atomic_load(&rec_count);
        if (k >= rec_capacity) break;
        recorded *r = &rec[k];
        r->frame = start + ev.time;
        r->size = ev.size > 7 ? 7 : (uint8_t)ev.size;
        memcpy(r->bytes, ev.buffer, r->size);
        atomic_store(&rec_count, k + 1);
    }
    void *out = J->port_get_buffer(out_port, nframes);
    J->midi_clear_buffer(out);
    while (send_at >= 0 && send_next < send_count) {
        int64_t f = send_at + to_send[send_next].frame;
        if (f >= start + nframes) break;
        uint32_t offset = f < start ? 0 : (uint32_t)(f - start);
        J->midi_event_write(out, offset, to_send[send_next].bytes, to_send[send_next].size);
        send_next++;
    }
    if (flood) write_flood(out, nframes);
    return 0;
}

static void on_shutdown(int code, const char *reason, void *arg) {
    (void)code; (void)reason; (void)arg;
    atomic_store(&gone, 1);
}

static void on_signal(int sig) { stop = sig; }

int main(int argc, char **argv) {
    const char *server = NULL, *name = "probe", *record = NULL, *send = NULL;
    const char *from[8], *to[8];
    int nfrom = 0, nto = 0;
    double seconds = 60;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--flood")) { flood = 1; continue; }
        if (!v) { fprintf(stderr, "JackProbe: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--server")) server = v;
        else if (!strcmp(a, "--name")) name = v;
        else if (!strcmp(a, "--record")) record = v;
        else if (!strcmp(a, "--send")) send = v;
        else if (!strcmp(a, "--at")) send_at = atoll(v);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--from") && nfrom < 8) from[nfrom++] = v;
        else if (!strcmp(a, "--to") && nto < 8) to[nto++] = v;
        else { fprintf(stderr, "JackProbe: unknown option %s\n", a); return 2; }
    }
    char error[512];
    if (drummer_live_load_library(error, sizeof error) != 0) { fprintf(stderr, "JackProbe: %s\n", error); return 1; }
    J = drummer_jack();
    rec = calloc(rec_capacity, sizeof *rec);
    to_send = calloc(1 << 16, sizeof *to_send);
    if (!rec || !to_send) return 1;
    if (send) {
        FILE *f = fopen(send, "r");
        if (!f) { fprintf(stderr, "JackProbe: cannot read %s\n", send); return 1; }
        long long offset;
        unsigned b0, b1, b2;
        while (send_count < (1 << 16) && fscanf(f, "%lld %u %u %u", &offset, &b0, &b1, &b2) == 4) {
            recorded *r = &to_send[send_count++];
            r->frame = offset;
            r->size = 3;
            r->bytes[0] = (uint8_t)b0; r->bytes[1] = (uint8_t)b1; r->bytes[2] = (uint8_t)b2;
        }
        fclose(f);
    }
    int status = 0;
    client = server ? J->client_open(name, DRUMMER_JACK_NO_START_SERVER | DRUMMER_JACK_SERVER_NAME, &status, server)
                    : J->client_open(name, DRUMMER_JACK_NO_START_SERVER, &status);
    if (!client) { fprintf(stderr, "JackProbe: no JACK client (status 0x%x)\n", status); return 1; }
    in_port = J->port_register(client, "in", DRUMMER_JACK_MIDI_TYPE, DRUMMER_JACK_PORT_INPUT, 0);
    out_port = J->port_register(client, "out", DRUMMER_JACK_MIDI_TYPE, DRUMMER_JACK_PORT_OUTPUT, 0);
    J->set_process_callback(client, process, NULL);
    J->on_info_shutdown(client, on_shutdown, NULL);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (J->activate(client) != 0) { fprintf(stderr, "JackProbe: jack_activate failed\n"); return 1; }
    for (int i = 0; i < nfrom; i++)
        if (J->connect(client, from[i], J->port_name(in_port)) != 0) { fprintf(stderr, "JackProbe: cannot connect %s\n", from[i]); return 1; }
    for (int i = 0; i < nto; i++)
        if (J->connect(client, J->port_name(out_port), to[i]) != 0) { fprintf(stderr, "JackProbe: cannot connect to %s\n", to[i]); return 1; }
    printf("ready\n");
    fflush(stdout);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!stop && !atomic_load(&gone)) {
        usleep(2000);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds) break;
    }
    if (!atomic_load(&gone)) {
        J->deactivate(client);
        J->client_close(client);
    }
    if (record) {
        FILE *f = fopen(record, "w");
        if (!f) return 1;
        uint32_t n = atomic_load(&rec_count);
        for (uint32_t i = 0; i < n; i++) {
            fprintf(f, "%lld", (long long)rec[i].frame);
            for (int k = 0; k < rec[i].size; k++) fprintf(f, " %u", rec[i].bytes[k]);
            fprintf(f, "\n");
        }
        fclose(f);
    }
    printf("done: %u events recorded, %u sent\n", atomic_load(&rec_count), send_next);
    return 0;
}
