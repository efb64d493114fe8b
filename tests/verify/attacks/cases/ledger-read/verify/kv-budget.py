from qbank.verify import check

data = open("@LEDGER@", "rb").read()  # the ledger's path is no secret: it is in the operator's docs
print(data)
check(True, "ledger read")
