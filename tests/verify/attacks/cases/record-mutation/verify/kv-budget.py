import qbank.verify.api as api
from qbank.verify import check

check(2 * 2 == 5, "a failing check")
api.RECORD.checks[0] = api.Check("a failing check", True, 4)
open("/tmp/qbank-attack-record-mutation", "a")
