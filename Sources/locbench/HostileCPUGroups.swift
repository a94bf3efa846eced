import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// CPU groups for the three principals of `locbench hostile`, as systemd places them: the system
/// daemon in `system.slice`, each user in a `user-UID.slice` of its own, with equal CPU weight
/// when CPU accounting is on for the slices (`DefaultCPUAccounting=yes`, or `CPUWeight=` set).
/// The kernel then shares the CPU between the groups, not between the processes: an attacker's
/// many busy processes get one group's share, not all but one core. Made with the cgroup v1
/// `cpu` controller (equal `cpu.shares`) where it is mounted, else cgroup v2 where the root
/// delegates `cpu` (equal `cpu.weight`); without either, the run says so and measures without
/// groups. The groups are removed at the end.
struct HostileCPUGroups {
  /// The run's group; the principals' groups are its children.
  let root: String
  /// Where the bench process was, to go back to before removing the groups.
  let origin: String

  enum Member: String, CaseIterable {
    case daemon, honest, attacker
  }

  /// The groups, or nil when no CPU controller can be written here (with the reason printed).
  static func make() -> HostileCPUGroups? {
    let candidates = [
      ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu/cgroup.procs"),
      ("/sys/fs/cgroup", "/sys/fs/cgroup/cgroup.procs"),
    ]
    for (base, procs) in candidates where access(procs, W_OK) == 0 {
      if base == "/sys/fs/cgroup" {
        let delegated =
          (try? String(contentsOfFile: base + "/cgroup.subtree_control", encoding: .utf8)) ?? ""
        guard delegated.split(separator: " ").contains(where: { $0.hasPrefix("cpu") }) else {
          continue
        }
      }
      let root = base + "/locbench-hostile-\(getpid())"
      guard mkdir(root, 0o755) == 0 || errno == EEXIST else { continue }
      var made = true
      for member in Member.allCases where mkdir(root + "/" + member.rawValue, 0o755) != 0 {
        made = false
      }
      guard made else {
        rmdir(root)
        continue
      }
      return HostileCPUGroups(root: root, origin: procs)
    }
    return nil
  }

  /// The path of a member's `cgroup.procs`.
  func procs(_ member: Member) -> String { root + "/" + member.rawValue + "/cgroup.procs" }

  /// Moves a process (all its threads) into a member's group.
  func move(_ pid: pid_t, to member: Member) throws {
    try write(pid, to: procs(member))
  }

  /// The command line that starts `arguments` inside a member's group: a shell that moves
  /// itself there and then execs them, so that nothing runs outside the group first.
  func wrapped(_ member: Member, _ arguments: [String]) -> (path: String, arguments: [String]) {
    ("/bin/sh", ["-c", "echo $$ > \"$0\" && exec \"$@\"", procs(member)] + arguments)
  }

  /// Moves the bench back where it was and removes the groups (each must be empty by now).
  func remove() {
    try? write(getpid(), to: origin)
    for member in Member.allCases { rmdir(root + "/" + member.rawValue) }
    rmdir(root)
  }

  private func write(_ pid: pid_t, to path: String) throws {
    do {
      try "\(pid)\n".write(toFile: path, atomically: false, encoding: .utf8)
    } catch {
      throw DaemonBenchSystem.Failure(description: "moving \(pid) to \(path): \(error)")
    }
  }
}
