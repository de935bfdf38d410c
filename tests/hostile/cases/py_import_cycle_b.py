from py_import_cycle_a import A
B = A
