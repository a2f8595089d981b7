package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"

	"github.com/lakesoul-go/lakesoul/lakesoultc"
)

// dockerInstr is one instruction of a Dockerfile: its keyword (upper case)
// and its arguments, continuation lines joined, ARG references expanded.
type dockerInstr struct {
	cmd  string
	args string
}

// dockerStage is one FROM … stage.
type dockerStage struct {
	from, name string
	instrs     []dockerInstr
}

// parseDockerfile reads the repository's Dockerfile into stages. It knows
// what this project's Dockerfile uses: comments, line continuations, ARG
// defaults (global and per stage) expanded as ${NAME}, FROM … AS name.
func parseDockerfile(t *testing.T) []dockerStage {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatalf("the repository has no Dockerfile: %v", err)
	}
	defer f.Close()
	var lines []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	expand := func(s string) string {
		return regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := args[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	var stages []dockerStage
	for _, l := range lines {
		cmd, rest, _ := strings.Cut(l, " ")
		cmd, rest = strings.ToUpper(cmd), strings.TrimSpace(rest)
		switch cmd {
		case "ARG":
			name, def, _ := strings.Cut(rest, "=")
			if _, ok := args[name]; !ok || def != "" {
				args[name] = expand(def)
			}
			continue
		case "FROM":
			from, name, _ := strings.Cut(expand(rest), " AS ")
			stages = append(stages, dockerStage{from: strings.TrimSpace(from), name: strings.TrimSpace(name)})
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("Dockerfile: %s before FROM", cmd)
		}
		s := &stages[len(stages)-1]
		s.instrs = append(s.instrs, dockerInstr{cmd: cmd, args: expand(rest)})
	}
	return stages
}

// all returns the arguments of every instruction cmd of the stage.
func (s dockerStage) all(cmd string) []string {
	var out []string
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// env is the stage's ENV, in `ENV K=V K2=V2` form.
func (s dockerStage) env(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range s.all("ENV") {
		for _, kv := range strings.Fields(a) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("ENV %q: want K=V", a)
			}
			out[k] = v
		}
	}
	return out
}

// execForm parses an exec-form (JSON array) argument list.
func execForm(t *testing.T, what, s string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%s %s: want the exec form [\"…\"]: %v", what, s, err)
	}
	return out
}

// repoRoot is the module's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// TestImageSteps checks the container image without a Docker engine: the
// Dockerfile is multi-stage, its runtime is Debian with PostgreSQL's server
// packages, runs as a non-root user with its data in a volume and a
// HEALTHCHECK; then it replays the image on this (Debian) host: the build
// stage's `go build` as written, and the runtime's ENTRYPOINT and CMD with
// exactly the image's ENV (the addresses and the volume mapped to free
// ports and a temp dir), as a non-root account. That must bring up the
// embedded default (private PostgreSQL, admin password generated into the
// volume), answer the HEALTHCHECK command only once ready, serve psql and
// pgx, stop on the STOPSIGNAL and find its data again on the next start.
// What it cannot replay is the runtime's apt-get and useradd steps (they
// would change this host): it uses the host's PostgreSQL packages and the
// postgres account instead. TestImageDocker builds and runs the real image
// where a Docker engine is available.
func TestImageSteps(t *testing.T) {
	t.Parallel()
	requirePG(t)
	ctx := testCtx(t)
	stages := parseDockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a runtime stage", len(stages))
	}
	build, rt := stages[0], stages[len(stages)-1]
	if !strings.HasPrefix(rt.from, "debian:") {
		t.Errorf("runtime stage FROM %s, want Debian", rt.from)
	}
	if runs := strings.Join(rt.all("RUN"), "\n"); !regexp.MustCompile(`apt-get install[^\n]* postgresql( |$)`).MatchString(runs) ||
		!strings.Contains(runs, "create_main_cluster = false") {
		t.Errorf("runtime stage does not install Debian's postgresql without its default cluster:\n%s", runs)
	}
	users := rt.all("USER")
	if len(users) == 0 {
		t.Fatal("runtime stage has no USER: it would run as root")
	}
	imageUser, _, _ := strings.Cut(users[len(users)-1], ":")
	if imageUser == "root" || imageUser == "0" {
		t.Fatalf("runtime stage runs as %s", imageUser)
	}
	env := rt.env(t)
	for _, k := range []string{"LAKESOUL_DATA_DIR", "LAKESOUL_LISTEN", "LAKESOUL_METRICS_LISTEN"} {
		if env[k] == "" {
			t.Errorf("the image sets no %s", k)
		}
	}
	dataDir := env["LAKESOUL_DATA_DIR"]
	if vols := strings.Join(rt.all("VOLUME"), " "); dataDir == "" || !strings.Contains(vols, `"`+dataDir+`"`) {
		t.Errorf("LAKESOUL_DATA_DIR %q is not the VOLUME (%s)", dataDir, vols)
	}
	if env["LAKESOUL_CATALOG_URL"] != "" {
		t.Errorf("the image sets LAKESOUL_CATALOG_URL: the embedded default must be what runs without one")
	}
	health := rt.all("HEALTHCHECK")
	if len(health) != 1 {
		t.Fatalf("runtime stage has %d HEALTHCHECKs", len(health))
	}
	_, healthJSON, ok := strings.Cut(health[0], "CMD ")
	if !ok {
		t.Fatalf("HEALTHCHECK %q has no CMD", health[0])
	}
	healthCmd := execForm(t, "HEALTHCHECK CMD", healthJSON)
	entry := append(execForm(t, "ENTRYPOINT", rt.all("ENTRYPOINT")[0]), execForm(t, "CMD", rt.all("CMD")[0])...)

	// The build stage's go build, as written, into a temp dir instead of /out.
	var goBuild string
	for _, r := range build.all("RUN") {
		if strings.Contains(r, "go build") {
			goBuild = r
		}
	}
	m := regexp.MustCompile(`-o (\S+) \./cmd/lakesoul`).FindStringSubmatch(goBuild)
	if m == nil {
		t.Fatalf("build stage has no `go build … -o OUT ./cmd/lakesoul`: %q", goBuild)
	}
	copied := false
	for _, c := range rt.all("COPY") {
		f := strings.Fields(c)
		if len(f) == 3 && f[0] == "--from="+build.name && f[1] == m[1] && f[2] == "/usr/local/bin/lakesoul" {
			copied = true
		}
	}
	if !copied {
		t.Errorf("runtime stage does not COPY --from=%s %s /usr/local/bin/lakesoul: %q", build.name, m[1], rt.all("COPY"))
	}
	binDir := filepath.Join(testBaseDir(t), "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "lakesoul")
	cmd := exec.CommandContext(ctx, "bash", "-c", strings.Replace(goBuild, m[0], "-o "+bin+" ./cmd/lakesoul", 1))
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the build stage's %q: %v\n%s", goBuild, err, out)
	}
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}

	// The runtime, as the postgres account (a non-root user with a home of
	// its own, standing in for the image's user).
	acct, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("no postgres account to stand in for the image's user %s: %v", imageUser, err)
	}
	uid, _ := strconv.Atoi(acct.Uid)
	gid, _ := strconv.Atoi(acct.Gid)
	if os.Getuid() != 0 && os.Getuid() != uid {
		t.Skipf("running as uid %d: cannot switch to the postgres account", os.Getuid())
	}
	volume := filepath.Join(testBaseDir(t), "volume")
	if err := os.Mkdir(volume, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(volume, uid, gid); err != nil {
		t.Fatal(err)
	}
	pgAddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr, _, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	imageEnv := []string{"PATH=" + binDir + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + volume}
	for k, v := range env {
		switch k {
		case "LAKESOUL_DATA_DIR":
			v = volume
		case "LAKESOUL_LISTEN":
			if !strings.HasPrefix(v, "0.0.0.0:") {
				t.Errorf("LAKESOUL_LISTEN=%s: clients outside the container cannot reach it", v)
			}
			v = pgAddr
		case "LAKESOUL_METRICS_LISTEN":
			if !strings.HasPrefix(v, "0.0.0.0:") {
				t.Errorf("LAKESOUL_METRICS_LISTEN=%s: a scraper outside the container cannot reach it", v)
			}
			_, port, _ := strings.Cut(metricsAddr, ":")
			v = "0.0.0.0:" + port // as written: the HEALTHCHECK must turn it into loopback
		}
		imageEnv = append(imageEnv, k+"="+v)
	}
	inImage := func(args []string) *exec.Cmd {
		name := args[0]
		if name == "lakesoul" { // on the image's PATH
			name = bin
		}
		c := exec.CommandContext(ctx, name, args[1:]...)
		c.Env, c.Dir = imageEnv, volume
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Pdeathsig: syscall.SIGTERM}
		return c
	}
	if out, err := inImage(healthCmd).CombinedOutput(); err == nil {
		t.Fatalf("HEALTHCHECK %q passes with no server running: %s", healthCmd, out)
	}
	var stops []func()
	start := func() *lockedBuffer {
		c := inImage(entry)
		log := &lockedBuffer{}
		c.Stdout, c.Stderr = log, log
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// HEALTHCHECK's retries: until it passes (or the server exits).
		exited := make(chan error, 1)
		go func() { exited <- c.Wait() }()
		for {
			out, err := inImage(healthCmd).CombinedOutput()
			if err == nil {
				break
			}
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
				t.Fatalf("HEALTHCHECK %q is not a command of the image: %s", healthCmd, out)
			}
			select {
			case err := <-exited:
				t.Fatalf("%q exited before its HEALTHCHECK passed: %v\n%s", entry, err, log.String())
			case <-ctx.Done():
				t.Fatalf("HEALTHCHECK %q never passed:\n%s", healthCmd, log.String())
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Cleanup(func() { _ = c.Process.Kill() }) // a no-op once stopped
		stop := func() {
			if err := c.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := <-exited; err != nil {
				t.Errorf("the server did not stop cleanly on SIGTERM: %v\n%s", err, log.String())
			}
		}
		stops = append(stops, stop)
		return log
	}
	log := start()
	pw, err := os.ReadFile(filepath.Join(volume, "admin-password"))
	if err != nil {
		t.Fatalf("the embedded default kept no admin password in the volume: %v\n%s", err, log.String())
	}
	dsn := fmt.Sprintf("postgres://lakesoul:%s@%s/lakesoul", strings.TrimSpace(string(pw)), pgAddr)
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the image's server: %v\n%s", err, log.String())
	}
	mustExec(t, ctx, c, "CREATE SCHEMA img", "CREATE TABLE img.t (id bigint PRIMARY KEY, v text)", "INSERT INTO img.t VALUES (1, 'one'), (2, 'two')")
	c.Close(ctx)
	if _, err := os.Stat(filepath.Join(volume, "pg", "PG_VERSION")); err != nil {
		t.Errorf("the private catalog is not in the volume: %v", err)
	}
	stops[0]()

	// The volume alone carries the data over to the next container.
	start()
	c, err = pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "after a restart on the same volume", queryStrings(t, ctx, c, "SELECT id, v FROM img.t ORDER BY id"), []string{"1|one", "2|two"})
	c.Close(ctx)
	if psql, err := exec.LookPath("psql"); err == nil {
		out, err := exec.CommandContext(ctx, psql, "-X", "-At", "-c", "SELECT count(*) FROM img.t", dsn).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "2" {
			t.Errorf("psql: %v %s", err, out)
		}
	}
	stops[1]()
}

// lockedBuffer collects a process's output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestImageDocker builds the repository's image and runs it through the
// project's testcontainers module (package lakesoultc), where a Docker
// engine answers: the server inside runs as a non-root user, serves pgx on
// the embedded default, and keeps its data across a stop and start of the
// container (the volume). Skipped, saying so, without Docker.
func TestImageDocker(t *testing.T) {
	t.Parallel()
	lakesoultc.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ctr, err := lakesoultc.Run(ctx, "", lakesoultc.FromDockerfile(repoRoot(t)))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	code, out, err := ctr.Exec(ctx, []string{"id", "-u"}, tcexec.Multiplexed())
	if err != nil || code != 0 {
		t.Fatalf("id -u in the container: %d %v", code, err)
	}
	if uid, _ := io.ReadAll(out); strings.TrimSpace(string(uid)) == "0" {
		t.Errorf("the container runs as root")
	}
	connect := func() *pgx.Conn {
		dsn, err := ctr.ConnectionString(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := connect()
	mustExec(t, ctx, c, "CREATE SCHEMA imgd", "CREATE TABLE imgd.t (id bigint PRIMARY KEY, v text)", "INSERT INTO imgd.t VALUES (1, 'one')")
	c.Close(ctx)
	stopTimeout := time.Minute
	if err := ctr.Stop(ctx, &stopTimeout); err != nil {
		t.Fatal(err)
	}
	if err := ctr.Start(ctx); err != nil { // waits for /readyz again
		t.Fatal(err)
	}
	c = connect()
	defer c.Close(ctx)
	wantRows(t, "after the container restarted", queryStrings(t, ctx, c, "SELECT id, v FROM imgd.t"), []string{"1|one"})
}
