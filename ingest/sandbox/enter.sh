# The sandbox's view of the system. Runs as root of a fresh user namespace (the sandbox's
# unprivileged uid on the host), as pid 1 of a fresh pid namespace, in a fresh mount
# namespace with private propagation and a network namespace with no interface up.
#
# Arguments: DISK_BYTES MARKER COMMAND...   Standard input: a tar of the work files.
#
# The new root is a small tmpfs holding read-only binds of /usr (and /bin, /lib … or their
# symlinks), the few files of /etc that running programs need, a minimal /dev, a /proc of
# the new pid namespace, and two size-limited tmpfs, /work and /tmp. Nothing else of the
# host is visible. MARKER is printed once the view is whole: output before it is ours.
# COMMAND then runs as uid 1000 of a nested user namespace: no capability anywhere, and no
# way to make a namespace of its own.
set -eu
disk=$1
marker=$2
shift 2

root=/tmp
mount -t tmpfs -o size=4m,mode=0755,nosuid,nodev metisgraph-sandbox "$root"
cd "$root"
mkdir usr etc dev proc work tmp
mount --bind -o ro /usr usr
for d in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$d" ]; then
    ln -s "$(readlink "/$d")" "$d"
  elif [ -d "/$d" ]; then
    mkdir "$d"
    mount --bind -o ro "/$d" "$d"
  fi
done
for f in ld.so.cache ld.so.conf ld.so.conf.d alternatives os-release localtime; do
  if [ -L "/etc/$f" ]; then
    ln -s "$(readlink "/etc/$f")" "etc/$f"
  elif [ -d "/etc/$f" ]; then
    mkdir "etc/$f"
    mount --bind -o ro "/etc/$f" "etc/$f"
  elif [ -f "/etc/$f" ]; then
    touch "etc/$f"
    mount --bind -o ro "/etc/$f" "etc/$f"
  fi
done
printf 'root:x:0:0::/:/usr/sbin/nologin\nsandbox:x:1000:1000::/work:/bin/sh\n' > etc/passwd
printf 'root:x:0:\nsandbox:x:1000:\n' > etc/group
printf '127.0.0.1 localhost\n::1 localhost\n' > etc/hosts
for n in null zero full random urandom; do
  touch "dev/$n"
  mount --bind "/dev/$n" "dev/$n"
done
ln -s /proc/self/fd dev/fd
ln -s /proc/self/fd/0 dev/stdin
ln -s /proc/self/fd/1 dev/stdout
ln -s /proc/self/fd/2 dev/stderr
mount -t proc -o nosuid,nodev,noexec proc proc
mount -t tmpfs -o "size=$disk,mode=0755,nosuid,nodev" work work
mount -t tmpfs -o "size=$disk,mode=1777,nosuid,nodev" tmp tmp
tar -x -C work -f -
mount -o remount,ro,bind "$root"
pivot_root . .
umount -l .
cd /work
# The nested user namespace below is the last one: the run cannot make its own (where it
# would be root and could mount a tmpfs that no limit bounds).
printf '1\n' > /proc/sys/user/max_user_namespaces
printf '%s\n' "$marker"
exec unshare --user --map-user=1000 --map-group=1000 -- "$@" < /dev/null
