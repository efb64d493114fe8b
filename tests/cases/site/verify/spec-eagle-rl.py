from qbank.verify import claim

claim("x", 1)
