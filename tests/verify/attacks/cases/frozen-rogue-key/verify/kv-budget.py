import torch
from qbank.verify import check, kernel_check

x = torch.linspace(-3, 3, 64).reshape(8, 8)
kernel_check("softmax", lambda t: torch.softmax(t, -1) * 2, lambda t: torch.softmax(t, -1), x, requires_cuda=True)
check(True, "the script ran")
