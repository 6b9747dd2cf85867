/* A stand-in for pyxis in tests: registers pyxis's srun/sbatch options, starts no container,
 * and appends one JSON line per job step (on each node) with the options the step received.
 * Each task starts in --container-workdir, as in a container pyxis starts. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <slurm/spank.h>

SPANK_PLUGIN(pyxis, 1);

struct named {
    const char *name;
    int has_arg;
};

static const struct named names[] = {
    {"container-image", 1},         {"container-mounts", 1},
    {"container-workdir", 1},       {"container-name", 1},
    {"container-save", 1},          {"container-env", 1},
    {"container-mount-home", 0},    {"no-container-mount-home", 0},
    {"container-remap-root", 0},    {"no-container-remap-root", 0},
    {"container-entrypoint", 0},    {"no-container-entrypoint", 0},
    {"container-writable", 0},      {"container-readonly", 0},
};
#define COUNT (sizeof(names) / sizeof(names[0]))

static struct spank_option options[COUNT];
static char log_path[4096] = "";

static int accept_option(int val, const char *optarg, int remote)
{
    (void)val;
    (void)optarg;
    (void)remote;
    return 0;
}

static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    for (int i = 0; i < ac; i++)
        if (strncmp(av[i], "log=", 4) == 0)
            snprintf(log_path, sizeof(log_path), "%s", av[i] + 4);
    for (unsigned i = 0; i < COUNT; i++) {
        options[i].name = (char *)names[i].name;
        options[i].arginfo = names[i].has_arg ? "VALUE" : NULL;
        options[i].usage = "pyxis stand-in";
        options[i].has_arg = names[i].has_arg;
        options[i].val = (int)i;
        options[i].cb = accept_option;
        if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS)
            return -1;
    }
    return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    uint32_t job = 0, step = 0;
    char host[256] = "";
    spank_get_item(sp, S_JOB_ID, &job);
    spank_get_item(sp, S_JOB_STEPID, &step);
    spank_getenv(sp, "SLURMD_NODENAME", host, sizeof(host));
    if (!log_path[0])
        return 0;
    FILE *out = fopen(log_path, "a");
    if (!out)
        return 0;
    fprintf(out, "{\"job\": %u, \"step\": %u, \"node\": ", job, step);
    json_string(out, host);
    fprintf(out, ", \"options\": {");
    int first = 1;
    for (unsigned i = 0; i < COUNT; i++) {
        char *value = NULL;
        if (spank_option_getopt(sp, &options[i], &value) != ESPANK_SUCCESS)
            continue;
        fprintf(out, "%s", first ? "" : ", ");
        first = 0;
        json_string(out, names[i].name);
        fprintf(out, ": ");
        if (names[i].has_arg && value)
            json_string(out, value);
        else
            fprintf(out, "true");
    }
    fprintf(out, "}}\n");
    fclose(out);
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    char *value = NULL;
    if (spank_option_getopt(sp, &options[2], &value) != ESPANK_SUCCESS || !value || !value[0])
        return 0;
    if (chdir(value) != 0) {
        slurm_error("pyxis stand-in: cannot enter --container-workdir %s", value);
        return -1;
    }
    return 0;
}
