from qbank.verify import check

print(open("@REPO@/verify/_lib/root-only.txt").read())
check(True, "read")
