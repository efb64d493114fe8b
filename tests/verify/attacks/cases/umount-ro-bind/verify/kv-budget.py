import ctypes

from qbank.verify import check

libc = ctypes.CDLL(None, use_errno=True)
if libc.umount2(b"@REPO@/verify", 2) != 0:  # MNT_DETACH
    raise OSError(ctypes.get_errno(), "umount2 refused")
open("@REPO@/verify/pwned-by-attack", "w").write("pwned")
check(True, "unmounted")
