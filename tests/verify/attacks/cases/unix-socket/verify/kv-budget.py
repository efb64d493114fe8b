import socket

from qbank.verify import check

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("@SOCKET@")
s.sendall(b"pwned")
check(True, "connected")
