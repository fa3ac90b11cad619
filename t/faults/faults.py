#!/usr/bin/python3
"""The randomized fault suite (make check-faults; a fixed few in make check, t/8800-faults.sh).

faults.py [--seeds A:B | --seed N | --fixed | --schedule TEXT] [--list]: runs one seeded schedule of faults per
seed against a 2-4 process job on this host and checks every run against the invariants; prints
TAP, with the seed, the schedule and the replay command of any run that fails.  A schedule is
drawn from its seed alone (random.Random(seed)), so `make check-faults FAULT_SEED=N` replays it.

Three tables say what is tested; adding a layout, a fault or an invariant is one entry:
  LAYOUTS     the jobs (t/faults/job.lua's clusters), how they are launched, what a lost rank does
  FAULTS      what can happen to a running job, when, and what it does to the job's outcome
  INVARIANTS  what every run must show (each returns None, or the reason it does not hold)
Needs SINGA_TUI and top_srcdir (as make check sets them); the netns faults and disk full need root
and are left out of the schedules otherwise (the TAP line says so).
"""
import ast
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

TUI = os.environ.get("SINGA_TUI", "")
TOP = os.environ.get("top_srcdir", ".")
HERE = os.path.join(TOP, "t", "faults")
STEPS = 400          # a fault-free run lasts about 2.5 s (4 ms a step, t/plugins/slow.so)
CKPT_FREQ = 50       # t/faults/job.lua's checkpoint_freq
HEARTBEAT = 2        # cluster.heartbeat_timeout, s
BOUND = 45           # s: a run still going after this is hung
ROOT = os.geteuid() == 0 and bool(shutil.which("ip")) and bool(shutil.which("tc"))


# --- layouts -------------------------------------------------------------------------------
class Layout:
    """A job: job.lua's cluster JOB in PROCS processes; LOSS(rank) says what losing that rank
    does today: "ends" (every survivor ends naming it), "goes_on" (asynchronous, or synchronous
    with cluster.replicas: the others finish), "restarts" (--elastic: the job starts again on the
    survivors).  EXACT: harmless
    faults leave the fault-free run's params (to 1e-5; BITWISE: bit for bit, as
    docs/05-checkpoints.md promises for a synchronous job of 2 workers)."""

    def __init__(self, job, procs, loss, exact=False, bitwise=False, elastic=None, netns=False, rejoin=(), ref=None,
                 sync=False):
        self.job, self.procs, self.loss, self.exact, self.bitwise = job, procs, loss, exact, bitwise
        self.elastic, self.netns, self.rejoin = elastic, netns, rejoin
        self.sync = sync  # a rejoin copies its state from live peers (synchronous, replicas), no checkpoint
        self.ref = ref  # the layout whose fault-free run is this one's reference


def ends(_rank):
    return "ends"


LAYOUTS = {
    # synchronous, launched by --procs: a loss ends the job (every survivor names the lost rank)
    "sandblaster3": Layout("sandblaster3", 3, ends, exact=True, bitwise=True),
    # synchronous and elastic: a loss restarts the job on the 2 left, from the newest checkpoint
    "allreduce3-elastic": Layout("allreduce3", 3, lambda r: "restarts", exact=True, elastic=2),
    # the same in 4 processes: a restart on 3
    "allreduce4-elastic": Layout("allreduce4", 4, lambda r: "restarts", exact=True, elastic=2),
    # asynchronous: rank 1 holds worker group 1 alone, rank 0 the coordinator, rank 2 the servers
    "downpour3": Layout("downpour3", 3, lambda r: "goes_on" if r == 1 else "ends", rejoin=(1,)),
    # asynchronous, a server group per process: rank 1 can be lost and rejoin
    "hogwild2": Layout("hogwild2", 2, lambda r: "goes_on" if r == 1 else "ends", rejoin=(1,)),
    # synchronous with cluster.replicas = 2: the group goes on without any lost rank (rank 0's
    # coordination taken over by rank 1), and a lost rank but 0 rejoins it from the live peers
    "allreduce3-replicas": Layout("allreduce3r", 3, lambda r: "goes_on", exact=True, rejoin=(1, 2), sync=True),
    # ranks 0 and 1 in one network namespace, rank 2 (the servers) in another, a veth between
    "sandblaster3-netns": Layout("sandblaster3", 3, ends, exact=True, bitwise=True, netns=True, ref="sandblaster3"),
}


# --- the processes of a run ----------------------------------------------------------------
def parents():
    """{pid: parent pid} of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    out[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    return out


def descendants(pid):
    tree, found, todo = parents(), [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in tree.items() if pp == p]
        found += kids
        todo += kids
    return found


def environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    except OSError:
        return {}


class Net:
    """Two network namespaces joined by a veth pair, as bench/netns.sh makes them: A holds
    10.233.N.1 (ranks 0 and 1), B .2 (rank 2)."""

    def __init__(self, tag):
        self.a, self.b = f"singa-f{tag}-a", f"singa-f{tag}-b"
        self.va, self.vb = f"fva{tag}", f"fvb{tag}"
        self.net = f"10.233.{tag % 250}"

    def up(self):
        self.down()
        cmds = [["ip", "netns", "add", self.a], ["ip", "netns", "add", self.b],
                ["ip", "link", "add", self.va, "type", "veth", "peer", "name", self.vb],
                ["ip", "link", "set", self.va, "netns", self.a], ["ip", "link", "set", self.vb, "netns", self.b],
                ["ip", "-n", self.a, "addr", "add", self.net + ".1/24", "dev", self.va],
                ["ip", "-n", self.b, "addr", "add", self.net + ".2/24", "dev", self.vb]]
        for ns, dev in ((self.a, self.va), (self.b, self.vb)):
            cmds += [["ip", "-n", ns, "link", "set", "lo", "up"], ["ip", "-n", ns, "link", "set", dev, "up"]]
        for c in cmds:
            subprocess.run(c, check=True, stderr=subprocess.DEVNULL)

    def down(self):
        for ns in (self.a, self.b):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)

    def ns(self, rank):
        return self.b if rank == 2 else self.a

    def addr(self, rank):
        return self.net + (".2" if rank == 2 else ".1")


def shell_status(rc):
    return 128 - rc if rc < 0 else rc


class Run:
    """One run of a layout's job, in DIR: started, watched, ended."""

    def __init__(self, layout, dir, net=None):
        self.layout, self.dir, self.net = layout, dir, net
        self.events, self.procs, self.extra, self.injected, self.cleanups = [], [], [], [], []
        self.notes, self.hung, self.rc, self.extra_rcs, self.seen = [], False, None, [], {}
        self.watched, self.files = 0, []
        self.t0 = time.time()
        os.makedirs(os.path.join(dir, "ckpt"), exist_ok=True)

    def argv(self):
        return ["-e", os.path.join(HERE, "job.lua"), self.layout.job, self.dir, str(STEPS)]

    def file(self, name):
        """A file of the run's folder for a process's output, closed when the run ends."""
        self.files.append(open(os.path.join(self.dir, name), "w"))
        return self.files[-1]

    def start(self):
        lay, env = self.layout, dict(os.environ, SLOW_SO=os.path.abspath("t/plugins/.libs/slow.so"))
        if not lay.netns:
            el = ["--elastic", str(lay.elastic)] if lay.elastic else []
            out = self.file("out")
            self.procs = [subprocess.Popen([TUI, "--procs", str(lay.procs)] + el + self.argv(), env=env,
                                           stdout=out, stderr=subprocess.STDOUT, start_new_session=True)]
            return
        port = 20000 + random.Random(self.dir).randrange(20000)
        env.update(SINGA_SIZE=str(lay.procs), SINGA_COORDINATOR=f"tcp://{self.net.addr(0)}:{port}",
                   FAULT_HEARTBEAT="3")
        for r in range(lay.procs):
            out = self.file(f"out{r}")
            e = dict(env, SINGA_RANK=str(r), SINGA_BIND=self.net.addr(r))
            self.procs.append(subprocess.Popen(["ip", "netns", "exec", self.net.ns(r), TUI] + self.argv(), env=e,
                                               stdout=out, stderr=subprocess.STDOUT, start_new_session=True))

    def output(self):
        names = ["out"] if not self.layout.netns else [f"out{r}" for r in range(self.layout.procs)]
        text = ""
        for n in names + [f"rejoin{i}.out" for i in range(len(self.extra))]:
            try:
                with open(os.path.join(self.dir, n), errors="replace") as f:
                    text += f.read()
            except OSError:
                pass
        return text

    def step(self):
        """The newest step rank 0 printed."""
        steps = re.findall(r"^step (\d+) ", self.output(), re.M)
        return int(steps[-1]) if steps else -1

    def pids(self):
        """Every process of the job still running (the launcher's ranks, or the ranks started
        here), remembered with its coordinator's address (self.seen)."""
        found = []
        for p in self.procs + self.extra:
            if p.poll() is None:
                found += [p.pid] + descendants(p.pid)
        for p in found:
            self.seen.setdefault(p, environ(p).get(b"SINGA_COORDINATOR"))
        return found

    def watch(self):
        """Notes the job's processes every quarter of a second (an elastic restart makes new ones)."""
        if time.time() - self.watched > 0.25:
            self.watched = time.time()
            self.pids()

    def left(self):
        """The processes of the job seen running that still run."""
        return [p for p, c in self.seen.items() if c and environ(p).get(b"SINGA_COORDINATOR") == c]

    def rank_pid(self, rank):
        for p in self.pids():
            if environ(p).get(b"SINGA_RANK") == str(rank).encode():
                return p
        return None

    def endpoints(self):
        """{rank: (host, port)} from the ranks' announcements."""
        return {int(r): (h, int(p)) for r, h, p in
                re.findall(r"^rank (\d+) of \d+ \(pid \d+, \w+\) at tcp://([\d.]+):(\d+)", self.output(), re.M)}

    def log(self, what):
        self.events.append((time.time() - self.t0, what))

    def alive(self):
        return any(p.poll() is None for p in self.procs + self.extra)

    def kill(self):
        for p in set(self.pids() + self.left()):
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(p, sig)
                except OSError:
                    pass

    def wait(self, bound):
        while self.alive() and time.time() - self.t0 < bound:
            self.watch()
            time.sleep(0.05)
        self.hung = self.alive()
        if self.hung:
            self.log("still running at the bound: killed")
            self.kill()
        rcs = [shell_status(p.wait()) for p in self.procs]  # as --procs gives them, 128 + a signal
        self.rc = rcs[0] if rcs[0] != 0 else next((rc for rc in rcs if rc != 0), 0)
        self.extra_rcs = [shell_status(p.wait()) for p in self.extra]
        self.seconds = time.time() - self.t0
        for f in self.files:
            f.close()


# --- faults --------------------------------------------------------------------------------
def signal_rank(run, rank, sig):
    pid = run.rank_pid(rank)
    if pid:
        os.kill(pid, sig)
    return pid


def newest_ckpt(run):
    """The newest checkpoint step the job announced as written (-1: none)."""
    steps = re.findall(r"^checkpoint written: \S*/step(\d+)\.", run.output(), re.M)
    return int(steps[-1]) if steps else -1


def do_kill(run, p):
    p["ckpt_before"] = newest_ckpt(run)
    return signal_rank(run, p["rank"], signal.SIGKILL) and f"kill -9 rank {p['rank']}"


def do_kill_write(run, p):
    """kill -9 of a rank while it writes a checkpoint file (one it has open as *.ckpt.tmp), or, if
    it opens none within 3 s, wherever it is then."""
    pid = run.rank_pid(p["rank"])
    if not pid:
        return None
    p["ckpt_before"] = newest_ckpt(run)
    end, seen = time.time() + 3, False
    while not seen and time.time() < end:  # a write takes a few ms: no sleep between looks
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return None
        for fd in fds:
            try:
                seen = os.readlink(f"/proc/{pid}/fd/{fd}").endswith(".ckpt.tmp")
            except OSError:
                continue
            if seen:
                break
    os.kill(pid, signal.SIGKILL)  # at once: the write may be done a millisecond later
    return f"kill -9 rank {p['rank']} " + ("while it wrote a checkpoint file" if seen
                                            else "(it wrote no checkpoint file within 3 s)")


def do_kill_two(run, p):
    p["ckpt_before"] = newest_ckpt(run)
    pids = [run.rank_pid(r) for r in p["ranks"]]
    if not all(pids):
        return None
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return f"kill -9 ranks {p['ranks'][0]} and {p['ranks'][1]} at once"


def do_stop(run, p):
    pid = signal_rank(run, p["rank"], signal.SIGSTOP)
    if pid:
        time.sleep(p["secs"])
        os.kill(pid, signal.SIGCONT)
    return pid and f"SIGSTOP rank {p['rank']}, SIGCONT {p['secs']} s later"


def do_garbage(run, p):
    ep = run.endpoints().get(p["rank"])
    if not ep:
        return None
    cmd = [sys.executable, os.path.abspath(__file__), "--garbage", ep[0], str(ep[1]), str(p["bytes"]),
           str(p["seed"]), str(p["conns"])]
    if run.net:
        cmd = ["ip", "netns", "exec", run.net.ns(p["rank"])] + cmd
    subprocess.run(cmd, timeout=30, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f"{p['conns']} connections of {p['bytes']} random bytes to rank {p['rank']}'s tcp port and socket"


def send_garbage(host, port, nbytes, seed, conns):
    rng = random.Random(seed)
    for i in range(conns):
        for fam, addr in ((socket.AF_INET, (host, port)), (socket.AF_UNIX, f"\0singa-{host}:{port}")):
            try:
                with socket.socket(fam, socket.SOCK_STREAM) as s:
                    s.settimeout(2)
                    s.connect(addr)
                    s.sendall(bytes(rng.randrange(256) for _ in range(nbytes)))
            except OSError:
                pass


def do_rejoin(run, p):
    """Kills a rank the job can lose and starts it again with SINGA_REJOIN=1; for any other rank,
    asks a live one to rejoin, which it refuses."""
    r, lay = p["rank"], run.layout
    pid = run.rank_pid(r)
    if not pid:
        return None
    env = {k.decode(): v.decode() for k, v in environ(pid).items()}
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        argv = [TUI] + [a.decode() for a in f.read().split(b"\0") if a][1:]
    if run.net:
        argv = ["ip", "netns", "exec", run.net.ns(r)] + argv
    what = f"SINGA_REJOIN=1 rank {r} while it runs (refused)"
    if r in lay.rejoin:
        p["ckpt_before"] = newest_ckpt(run)
        os.kill(pid, signal.SIGKILL)
        lost = rf"rank {r} \(.*\) at tcp://.* the job goes on without it"
        for _ in range(200):
            if re.search(lost, run.output()):
                break
            time.sleep(0.05)
        what = f"kill -9 rank {r}, started again with SINGA_REJOIN=1 once it is lost"
    p["proc"] = len(run.extra)
    out = run.file(f"rejoin{p['proc']}.out")
    run.extra.append(subprocess.Popen(argv, env=dict(env, SINGA_REJOIN="1"), stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True))
    return what


def do_diskfull(run, p):
    ck = os.path.join(run.dir, "ckpt")
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={p['kb']}k", "tmpfs", ck], check=True)
    run.cleanups.append(["umount", ck])
    return f"checkpoint folder on a tmpfs of {p['kb']} kB"


def do_link_down(run, p):
    ip = ["ip", "-n", run.net.a, "link", "set", run.net.va]
    subprocess.run(ip + ["down"], check=True)
    time.sleep(p["secs"])
    subprocess.run(ip + ["up"], check=True)
    return f"the link between the namespaces down for {p['secs']} s"


def do_link_slow(run, p):
    for ns, dev in ((run.net.a, run.net.va), (run.net.b, run.net.vb)):
        subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", p["rate"],
                        "burst", "32kb", "latency", "400ms"], check=True)
    time.sleep(p["secs"])
    for ns, dev in ((run.net.a, run.net.va), (run.net.b, run.net.vb)):
        subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", dev, "root"], stderr=subprocess.DEVNULL)
    return f"the link shaped to {p['rate']} (tbf) for {p['secs']} s"


class Fault:
    """DRAW(rng, layout) gives a drawn fault's parameters; EFFECT(layout, params) what it does:
    "benign" (the job ends exactly as without it), ("loss", rank), ("rejoin", rank), "refused"
    (a rejoin refused, the job undisturbed) or ("fail", pattern of the error naming it)."""

    def __init__(self, do, draw, effect, applies=lambda lay: True, root=False, at_start=False, weight=1):
        self.do, self.draw, self.effect, self.applies = do, draw, effect, applies
        self.root, self.at_start, self.weight = root, at_start, weight  # how often it is drawn (by layout)


def rank_of(rng, lay):
    return rng.randrange(lay.procs)


FAULTS = {
    "kill": Fault(do_kill, lambda rng, lay: {"rank": rank_of(rng, lay)}, lambda lay, p: ("loss", p["rank"]), weight=4),
    # in the middle of a checkpoint write: its *.ckpt.tmp files must not outlive a job that goes on
    "kill-write": Fault(do_kill_write, lambda rng, lay: {"rank": rank_of(rng, lay)}, lambda lay, p: ("loss", p["rank"])),
    # two losses at once, in the elastic jobs: a restart on the processes left while they are at
    # least cluster.elastic.min, else the end of the job
    "kill-two": Fault(do_kill_two, lambda rng, lay: {"ranks": sorted(rng.sample(range(lay.procs), 2))},
                      lambda lay, p: ("losses", p["ranks"]), applies=lambda lay: bool(lay.elastic), weight=2),
    "stop": Fault(do_stop, lambda rng, lay: {"rank": rank_of(rng, lay), "secs": rng.choice([0.1, 0.3, 0.6, 1.0])},
                  lambda lay, p: "benign", weight=2),
    "stop-long": Fault(do_stop, lambda rng, lay: {"rank": rank_of(rng, lay),
                                                  "secs": rng.choice([HEARTBEAT + 1, HEARTBEAT + 7])},
                       lambda lay, p: ("loss", p["rank"]), applies=lambda lay: not lay.netns),
    "garbage": Fault(do_garbage, lambda rng, lay: {"rank": rank_of(rng, lay), "bytes": rng.choice([1, 7, 64, 4096]),
                                                   "conns": rng.randrange(1, 20), "seed": rng.randrange(1 << 30)},
                     lambda lay, p: "benign", weight=2),
    "rejoin": Fault(do_rejoin, lambda rng, lay: {"rank": rng.choice(lay.rejoin) if lay.rejoin and rng.random() < 0.7
                                                 else rank_of(rng, lay)},
                    lambda lay, p: ("rejoin", p["rank"]) if p["rank"] in lay.rejoin else "refused",
                    weight=lambda lay: 5 if lay.rejoin else 1),
    "disk-full": Fault(do_diskfull, lambda rng, lay: {"kb": rng.randrange(60, 300)},
                       lambda lay, p: ("fail", r"No space left on device"), root=True, at_start=True),
    "link-down": Fault(do_link_down, lambda rng, lay: {"secs": rng.choice([0.2, 0.5, 0.8])}, lambda lay, p: "benign",
                       applies=lambda lay: lay.netns, root=True),
    "link-down-long": Fault(do_link_down, lambda rng, lay: {"secs": 5}, lambda lay, p: ("loss", 2),
                            applies=lambda lay: lay.netns, root=True),
    "link-slow": Fault(do_link_slow, lambda rng, lay: {"rate": rng.choice(["5mbit", "20mbit", "100mbit"]),
                                                       "secs": rng.choice([0.5, 1.0, 2.0])},
                       lambda lay, p: "benign", applies=lambda lay: lay.netns, root=True),
}


# --- invariants ----------------------------------------------------------------------------
NAMED = [r"rank \d+ \([^)]*\) at tcp://\S+ (died|sent nothing|hung)", r"No space left on device"]


def effects(run):
    return [FAULTS[f].effect(run.layout, p) for f, p in run.injected]


def benign(run):
    return all(e in ("benign", "refused") for e in effects(run))


def finished(run):
    """Rank 0 (of however many the job ended with), or the rank that took over from it, trained
    every step."""
    return re.search(rf"^rank \d+ of \d+: {STEPS} steps$", run.output(), re.M)


def inv_bounded(run):
    if run.hung:
        return f"still running {BOUND} s after it started"
    return run.left() and f"processes left behind: {run.left()}"


def inv_named(run):
    if run.rc == 0 or any(re.search(pat, run.output()) for pat in NAMED):
        return None
    return f"exit status {run.rc} without a named error"


def refused(run, p):
    """The rejoining process P started ended, saying why it could not."""
    said = "\n".join(tail(os.path.join(run.dir, f"rejoin{p['proc']}.out")))
    return run.extra_rcs[p["proc"]] != 0 and re.search(r"SINGA_REJOIN: |cannot rejoin", said)


def inv_outcome(run):
    """What today's runtime promises for the one disruptive fault (or none) a schedule injected."""
    out, lay = run.output(), run.layout
    bad = [(f, p, e) for (f, p), e in zip(run.injected, effects(run)) if e not in ("benign", "refused")]
    for (f, p), e in zip(run.injected, effects(run)):
        if e == "refused" and not refused(run, p):
            return f"the rejoin of live rank {p['rank']} was not refused (status {run.extra_rcs[p['proc']]})"
    if not bad:
        return None if run.rc == 0 and finished(run) else f"status {run.rc} (0 and every step expected)"
    if len(bad) > 1:
        return None  # several at once: inv_named holds them to a named error
    f, p, e = bad[0]
    if e[0] == "fail":
        return None if run.rc != 0 and re.search(e[1], out) else f"status {run.rc}, no error matching {e[1]!r}"
    if e[0] == "losses":
        return two_lost(run, e[1])
    rank = e[1]
    named = re.search(rf"rank {rank} \([^)]*\) at tcp://\S+ (died|sent nothing|hung)", out)
    if e[0] == "rejoin" and lay.sync:
        # from live peers at a step rank 0 picks, or refused too near the job's end, the job going on
        rc = run.extra_rcs[p["proc"]]
        said = "\n".join(tail(os.path.join(run.dir, f"rejoin{p['proc']}.out")))
        back = rc == 0 and re.search(rf"rank {rank} \(.*\) rejoins the synchronous group: from step", out)
        late = rc != 0 and re.search(r"too near its end", said)
        ok = run.rc == 137 and finished(run) and (back or late)
        return None if ok else f"status {run.rc}, the rejoined rank's {rc}: a synchronous rejoin that ends well expected"
    if e[0] == "rejoin" and p["ckpt_before"] < 0:
        # it takes its groups' state from a whole checkpoint the job wrote before it was lost
        said = "\n".join(tail(os.path.join(run.dir, f"rejoin{p['proc']}.out")))
        ok = run.rc == 137 and finished(run) and run.extra_rcs[p["proc"]] != 0 and \
            re.search(r"resume: no checkpoint in .* verifies", said)
        return None if ok else f"status {run.rc}: a rejoin refused for want of a whole checkpoint expected"
    if e[0] == "rejoin":
        rc = run.extra_rcs[p["proc"]]
        ok = run.rc == 137 and rc == 0 and finished(run) and re.search(rf"rank {rank} \(.*\) rejoined at step", out)
        return None if ok else f"status {run.rc}, the rejoined rank's {rc}: a rejoin that ends well expected"
    what = lay.loss(rank)
    if what == "ends":
        return None if run.rc not in (0, 124) and named else f"status {run.rc}: an end naming rank {rank} expected"
    if what == "restarts":
        # a stopped rank that wakes before --procs ends it ends to restart like the others: no loss
        back = f == "stop-long" and re.search(r"elastic restart 1: no process lost", out)
        ok = run.rc == 0 and finished(run) and (back or re.search(rf"elastic restart 1: rank {rank} lost", out))
        return None if ok else f"status {run.rc}: an elastic restart without rank {rank} that ends well expected"
    if f in ("kill", "kill-write"):  # --procs exits with rank 0's status when it is not 0: 1 for a killed rank 0
        want = 1 if rank == 0 else 137
        ok = run.rc == want and finished(run) and named and "the job goes on without it" in out
        return None if ok else f"status {run.rc}: the job going on without rank {rank} (status {want}) expected"
    return None if finished(run) else f"status {run.rc}: the job going on to step {STEPS} expected"


def two_lost(run, ranks):
    """Two ranks of an elastic job lost at once: a restart on the others if enough are left."""
    out, lay = run.output(), run.layout
    if lay.procs - 2 >= lay.elastic:
        ok = run.rc == 0 and finished(run) and re.search(rf"elastic restart 1: ranks {ranks[0]},{ranks[1]} lost", out)
        return None if ok else f"status {run.rc}: an elastic restart without ranks {ranks} that ends well expected"
    ok = run.rc not in (0, 124) and not finished(run) and re.search(r"fewer than cluster\.elastic\.min", out)
    return None if ok else f"status {run.rc}: an end saying fewer than cluster.elastic.min are left expected"


def read_params(path):
    vals = {}
    with open(path) as f:
        for line in f:
            name, x = line.split()
            vals.setdefault(name, []).append(float(x))
    return vals


def losses(text):
    return {int(s): float(x) for s, x in re.findall(r"^step (\d+) +train +loss ([\d.]+)", text, re.M)}


def inv_exact(run):
    """Benign faults only: the fault-free run's losses and params (bitwise where promised)."""
    if run.is_ref or not (benign(run) and run.layout.exact):
        return None
    ref = reference(run.layout)
    if isinstance(ref, str):
        return ref
    a, b = losses(run.output()), losses(ref.output())
    worse = [s for s in b if s not in a or abs(a[s] - b[s]) > 1.5e-4 * max(1, abs(b[s]))]
    if worse or len(a) != len(b):
        return f"losses differ from the fault-free run's at steps {worse[:5]} ({len(a)} against {len(b)} records)"
    try:
        pa, pb = read_params(os.path.join(run.dir, "params.txt")), read_params(os.path.join(ref.dir, "params.txt"))
    except OSError as e:
        return f"no params: {e}"
    num = sum((x - y) ** 2 for n in pb for x, y in zip(pa.get(n, []), pb[n]))
    den = sum(y * y for n in pb for y in pb[n])
    rel = (num / den) ** 0.5 if den else 1
    run.notes.append("params identical" if pa == pb else f"params {rel:.2g} from the fault-free run's")
    if run.layout.bitwise and pa != pb:
        return f"params {rel:.3g} from the fault-free run's, not bitwise the same"
    return None if rel < 1e-5 and pa.keys() == pb.keys() else f"params {rel:.3g} from the fault-free run's"


def ckpt_steps(d):
    """{step: [its files]} of a checkpoint folder."""
    steps = {}
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        m = re.match(r"step(\d+)\..*ckpt$", n)
        if m:
            steps.setdefault(int(m.group(1)), []).append(os.path.join(d, n))
    return steps


def tui(*args, timeout=60):
    env = dict(os.environ, SLOW_SO=os.path.abspath("t/plugins/.libs/slow.so"))
    r = subprocess.run([TUI] + list(args), env=env, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def inv_ckpts_same(run):
    """Benign faults only: every checkpoint holds the fault-free run's params of its step."""
    if run.is_ref or not (benign(run) and run.layout.exact):
        return None
    ref = reference(run.layout)
    if isinstance(ref, str):
        return ref
    mine, theirs = ckpt_steps(os.path.join(run.dir, "ckpt")), ckpt_steps(os.path.join(ref.dir, "ckpt"))
    pairs = [x for s in sorted(mine) if s in theirs for x in (mine[s][0], theirs[s][0])]
    if sorted(mine) != sorted(theirs):
        return f"checkpoints of steps {sorted(mine)}, the fault-free run's {sorted(theirs)}"
    rc, out, err = tui("-e", os.path.join(HERE, "ckdiff.lua"), *pairs)
    rows = out.split("\n")[:-1]
    far = [r for r in rows if "failed" in r or float(r.split()[1]) >= 1e-5]
    same = sum(r.endswith("identical") for r in rows)
    run.notes.append(f"{same} of {len(rows)} checkpoints bitwise the fault-free run's")
    if rc != 0 or far or len(rows) != len(mine) or (run.layout.bitwise and same != len(rows)):
        return f"checkpoints unlike the fault-free run's: {far[:3] or err.strip()[-200:] or rows}"
    return None


def inv_ckpts_load(run):
    """Every checkpoint on disk loads, but one a loss or a failure left incomplete (a file missing:
    docs/05-checkpoints.md), and --test loads the newest whole one."""
    steps = ckpt_steps(os.path.join(run.dir, "ckpt"))
    whole = []
    for s, files in sorted(steps.items()):
        rc, out, err = tui("--ckpt-info", files[0])
        if rc == 0:
            whole.append(s)
        elif benign(run) or not re.search(r"checkpoint step \d+ is incomplete: \S+ is missing", err):
            return f"step {s} does not load: {err.strip()[-300:]}"
    if not whole:
        return None
    rc, out, err = tui("--test", *run.argv())
    if rc != 0 or not re.search(rf"^loaded \S+ \(step {whole[-1]}\)$", out, re.M):
        return f"--test does not load step {whole[-1]}: {(out + err).strip()[-300:]}"
    return None


def inv_no_tmp(run):
    """No temp file is left, but a kill -9 in the middle of a write that ended the job (the next
    write or resume removes it, docs/05-checkpoints.md)."""
    d = os.path.join(run.dir, "ckpt")
    tmps = [n for n in os.listdir(d) if ".tmp" in n] if os.path.isdir(d) else []
    killed = any(f in ("kill", "kill-write", "rejoin") for f, _ in run.injected) or run.hung
    return tmps and not (killed and run.rc != 0 and not finished(run)) and f"left behind: {tmps}"


def inv_resume(run):
    """No committed step is lost: an elastic restart resumes the newest checkpoint written before
    the loss, or a newer one."""
    m = re.search(r"^elastic restart 1 of \d+: rank \d+ lost, resuming step (\d+)", run.output(), re.M)
    before = [p.get("ckpt_before", -1) for f, p in run.injected if "ckpt_before" in p]
    if not m or not before:
        return None
    at = int(m.group(1))
    if at >= max(before) and at % CKPT_FREQ == 0:
        return None
    return f"resumed step {at}; step {max(before)} was written before the loss"


def inv_replicas(run):
    """cluster.replicas: every replica of a server that ended with the job (its digest of values and
    updater state in its process's log) holds bitwise the same, at the last step when the job
    trained every step."""
    ws = os.path.join(run.dir, "ws")
    if not os.path.isdir(ws):
        return None
    held, n = {}, 0
    for name in sorted(os.listdir(ws)):
        with open(os.path.join(ws, name)) as f:
            for server, version, digest in re.findall(
                    r"replica \d+ of server ([\d.]+) \(rank \d+\): \d+ slices? at version (\d+), digest (\w+)", f.read()):
                held.setdefault(server, set()).add((int(version), digest))
                n += 1
    for server, got in sorted(held.items()):
        if len(got) > 1:
            return f"server {server}'s replicas differ: {sorted(got)}"
        if finished(run) and next(iter(got))[0] != STEPS:
            return f"server {server}'s replicas end at version {next(iter(got))[0]}, not {STEPS}"
    run.notes.append(f"{n} replicas of {len(held)} servers agree")
    return None


def inv_steps(run):
    """No committed step lost or trained twice: each worker group's records (every 10 steps) go on
    without a gap or a repeat, but from the checkpoint an elastic restart resumes (the steps
    since it are trained again, as documented) and from the one a rejoined group starts at."""
    last = {}  # group: (its last record's step, whether the next must be 10 steps on)
    for line in run.output().splitlines():
        if line.startswith("elastic restart "):
            m = re.search(r"resuming step (\d+)", line)
            last = {g: (int(m.group(1)) - 10 if m else -10, True) for g in last}
        m = re.search(r"rank \d+ \(workers (\d+)\.\d+.*\) rejoined at step (\d+)", line)
        if m:
            last[m.group(1)] = (int(m.group(2)), False)
        m = re.match(r"step (\d+) +train(?: g(\d+))? ", line)
        if m:
            s, g = int(m.group(1)), m.group(2) or "0"
            at, next_only = last.get(g, (s - 10, True))
            if s != at + 10 if next_only else s < at:
                return f"group {g}: step {s} recorded after step {at}"
            last[g] = (s, True)
    return None


INVARIANTS = [
    ("ends within the bound, no process left", inv_bounded),
    ("status 0 or a named error", inv_named),
    ("the outcome today's runtime promises", inv_outcome),
    ("benign faults: the fault-free losses and params", inv_exact),
    ("benign faults: every checkpoint the fault-free run's", inv_ckpts_same),
    ("every checkpoint on disk loads (--ckpt-info, --test)", inv_ckpts_load),
    ("no .tmp left behind", inv_no_tmp),
    ("a restart loses no committed step", inv_resume),
    ("no step lost or trained twice", inv_steps),
    ("every replica of a server bitwise the same", inv_replicas),
]


# --- schedules -----------------------------------------------------------------------------
def draw(seed):
    """(layout name, [(step or None at the start, fault name, params)]) for SEED: one to three
    faults, at most one of them disruptive (a loss, a rejoin, a failure)."""
    rng = random.Random(seed)
    name = rng.choice(sorted(LAYOUTS))
    lay = LAYOUTS[name]
    names = [f for f in sorted(FAULTS) if FAULTS[f].applies(lay)]
    faults, disruptive = [], False
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        for _ in range(20):
            f = rng.choices(names, [FAULTS[n].weight(lay) if callable(FAULTS[n].weight) else FAULTS[n].weight
                                    for n in names])[0]
            p = FAULTS[f].draw(rng, lay)
            bad = FAULTS[f].effect(lay, p) not in ("benign", "refused")
            if not (bad and disruptive):
                break
        else:
            continue
        disruptive |= bad
        # a disruptive fault once there is a checkpoint, and early enough for its effect to show
        step = None if FAULTS[f].at_start else rng.randrange(60, STEPS - 120, 10) if bad else \
            rng.randrange(10, STEPS - 60, 10)
        faults.append((step, f, p))
    faults.sort(key=lambda x: -1 if x[0] is None else x[0])
    return name, faults


def describe(sched):
    name, faults = sched
    parts = ["start" if s is None else f"step {s}" for s, _, _ in faults]
    return name + ": " + "; ".join(f"{at} {f} {p}" for at, (_, f, p) in zip(parts, faults))


def parse(text):
    """The schedule describe() printed as TEXT."""
    name, _, rest = text.partition(": ")
    faults = []
    for part in filter(None, (x.strip() for x in rest.split("; "))):
        m = re.match(r"(?:step (\d+)|start) ([\w-]+) (\{.*\})$", part)
        if not m or name not in LAYOUTS or m.group(2) not in FAULTS:
            raise ValueError(f"not a schedule: {part!r} of {text!r}")
        faults.append((int(m.group(1)) if m.group(1) else None, m.group(2), ast.literal_eval(m.group(3))))
    return name, faults


def inject(run, step, f, p):
    p = dict(p)  # what the fault records (the pids it started, the newest checkpoint) is the run's
    t, at = time.time() - run.t0, run.step() if step is not None else "start"
    what = FAULTS[f].do(run, p)
    if what:
        run.injected.append((f, p))
    run.events.append((t, f"at step {at}: " + (what or f"{f} {p}: its rank no longer runs")))


def execute(tmp, tag, sched, is_ref=False):
    """Runs SCHED in TMP/TAG; returns the run, checked (run.failures)."""
    name, faults = sched
    lay = LAYOUTS[name]
    d = os.path.join(tmp, tag)
    shutil.rmtree(d, ignore_errors=True)
    run = Run(lay, d, Net(os.getpid() % 1000) if lay.netns else None)
    run.is_ref = is_ref
    threads = []
    try:
        if run.net:
            run.net.up()
        for s, f, p in faults:
            if s is None:
                inject(run, s, f, p)
        run.start()
        pending = [x for x in faults if x[0] is not None]
        while pending and run.alive() and time.time() - run.t0 < BOUND:
            now = run.step()
            for x in [x for x in pending if now >= x[0]]:
                pending.remove(x)
                threads.append(threading.Thread(target=inject, args=(run,) + x, daemon=True))
                threads[-1].start()
            run.watch()
            time.sleep(0.02)
        for s, f, p in pending:
            run.log(f"step {s} {f} {p}: not reached, the job ended first")
        for t in threads:
            t.join(BOUND)
        run.wait(BOUND)
        run.failures = [(what, why) for what, inv in INVARIANTS for why in [inv(run)] if why]
    finally:
        run.kill()  # none is left but when the driver itself failed or was interrupted
        for c in run.cleanups:
            subprocess.run(c, stderr=subprocess.DEVNULL)
        if run.net:
            run.net.down()
    return run


REFS = {}


def reference(lay):
    """The fault-free run of LAYOUT's reference layout (run once), or why there is none."""
    name = lay.ref or next(n for n, l in LAYOUTS.items() if l is lay)
    if name not in REFS:
        run = execute(TMP, "ref-" + name, (name, []), is_ref=True)
        REFS[name] = run if not run.failures else f"the fault-free run of {name} failed: {run.failures}"
    return REFS[name]


def runnable(sched):
    """None, or why this machine cannot run SCHED."""
    lay = LAYOUTS[sched[0]]
    if not ROOT and (lay.netns or any(FAULTS[f].root for _, f, _ in sched[1])):
        return "needs root, ip and tc (network namespaces, tmpfs)"
    return None


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


# Bugs of today's runtime the suite found, as (layout, fault, what goes wrong): a run of that
# layout with that fault injected that breaks an invariant is reported `not ok ... # TODO` (TAP:
# expected to fail, the suite still passes).  Remove the entry with the fix.
KNOWN = []


def known(run):
    name = next(n for n, l in LAYOUTS.items() if l is run.layout)
    return next((why for lay, f, why in KNOWN if lay == name and any(f == g for g, _ in run.injected)), None)


def report(n, seed, sched, run):
    head = f"{label(seed)}: {describe(sched)}"
    todo = known(run) if run.failures else None
    if todo:
        head += f" # TODO known bug: {todo}"
    if not run.failures:
        print(f"ok {n} - {head}" + (f" ({'; '.join(run.notes)})" if run.notes else ""))
        for t, e in run.events:
            print(f"# {t:6.2f} s: {e}")
        print(f"# ended with status {run.rc} after {run.seconds:.1f} s")
        return True
    print(f"not ok {n} - {head}")
    for what, why in run.failures:
        print(f"# invariant failed: {what}: {why}")
    for t, e in run.events:
        print(f"# {t:6.2f} s: {e}")
    print(f"# ended with status {run.rc} after {run.seconds:.1f} s; output in {run.dir}")
    if isinstance(seed, int):
        print(f"# replay: make check-faults FAULT_SEED={seed}")
    print(f"# replay (whatever the tables hold then): make check-faults FAULT_SCHEDULE=\"{describe(sched)}\"")
    for name in ["out", "out0", "out1", "out2", "rejoin0.out", "rejoin1.out"]:
        for line in tail(os.path.join(run.dir, name)):
            print(f"#   {name}: {line}")
    return bool(todo)


TMP = "t/faults.tmp"


# The short fixed set of make check (t/8800-faults.sh, --fixed), none needing root: stops and
# garbage that change nothing, a loss that ends a job, one that restarts an elastic job (rank 0),
# one a job with replicas goes on without, and that rank rejoining it,
# a Hogwild rank lost and rejoined, one killed while it writes a checkpoint, a rejoin refused.
# Explicit, so new table entries leave it be.
FIXED = [
    ("sandblaster3", [(100, "stop", {"rank": 2, "secs": 0.6}),
                      (200, "garbage", {"rank": 0, "bytes": 64, "conns": 5, "seed": 1})]),
    ("sandblaster3", [(120, "kill", {"rank": 1})]),
    ("allreduce3-elastic", [(120, "kill", {"rank": 0})]),
    ("allreduce3-replicas", [(120, "kill", {"rank": 2})]),
    ("allreduce3-replicas", [(100, "rejoin", {"rank": 1})]),
    ("hogwild2", [(150, "rejoin", {"rank": 1})]),
    ("hogwild2", [(150, "kill-write", {"rank": 1})]),
    ("downpour3", [(80, "rejoin", {"rank": 0}), (160, "stop", {"rank": 1, "secs": 0.3})]),
    # the two launcher bugs the suite found: a stalled rank that comes back, two losses at once
    ("allreduce3-elastic", [(220, "stop-long", {"rank": 2, "secs": 3})]),
    ("allreduce3-elastic", [(150, "kill-two", {"ranks": [0, 2]})]),
]


def main(argv):
    global TMP
    if len(argv) > 1 and argv[1] == "--garbage":
        send_garbage(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), int(argv[6]))
        return 0
    seeds = list(range(1, 31))
    for opt, val in zip(argv, argv[1:] + [""]):
        if opt == "--seeds":
            a, b = val.split(":")
            seeds = list(range(int(a), int(b) + 1))
        elif opt == "--seed":
            seeds = [int(val)]
    runs = [(s, draw(s)) for s in seeds]
    if "--schedule" in argv:
        runs = [("schedule", parse(argv[argv.index("--schedule") + 1]))]
    if "--fixed" in argv:
        runs, TMP = [(f"fixed {i}", sched) for i, sched in enumerate(FIXED, 1)], "t/8800-faults.tmp"
    if "--list" in argv:
        for s, sched in runs:
            print(f"{label(s)}: {describe(sched)}")
        return 0
    if not TUI:
        print("SINGA_TUI is not set", file=sys.stderr)
        return 2
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    gen = os.path.join(TMP, "gen.lua")
    with open(gen, "w") as f:
        f.write('require("testdata").idx(arg[1], 480, 10, 12, 12, 4242)\n')
    if tui("-e", gen, os.path.join(TMP, "data"))[0] != 0:
        print("Bail out! cannot write the test data")
        return 1
    ok, clean = True, True
    for n, (seed, sched) in enumerate(runs, 1):
        why = runnable(sched)
        if why:
            print(f"ok {n} - {label(seed)}: {describe(sched)} # SKIP {why}")
            continue
        run = execute(TMP, label(seed).replace(" ", ""), sched)
        ok &= report(n, seed, sched, run)
        clean &= not run.failures
        sys.stdout.flush()
    print(f"1..{len(runs)}")
    if clean:  # a failing run's files stay for a look, a known bug's too
        shutil.rmtree(TMP, ignore_errors=True)
    return 0 if ok else 1


def label(seed):
    return f"seed {seed}" if isinstance(seed, int) else seed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
