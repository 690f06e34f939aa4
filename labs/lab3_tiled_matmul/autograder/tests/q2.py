OK_FORMAT = True

test = {   'name': 'q2',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import tiling\n'
                                               '>>> from gpuperf.grading import call, check_close\n'
                                               ">>> check_close('smem_bytes(128, 128, 32, 2, 3)', call('smem_bytes', smem_bytes, 128, 128, 32, 2, 3), tiling.shared_memory_bytes(128, 128, 32, 'fp16', "
                                               "3), unit='B', hints={0.5: 'both panels are in shared memory: A (BM×BK) and B (BK×BN)', 1 / 3: 'multiply by the number of stages'})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import tiling\n'
                                               '>>> from gpuperf.grading import call, check_close, check_true\n'
                                               ">>> check_close('smem_bytes(64, 256, 64, 4, 2)', call('smem_bytes', smem_bytes, 64, 256, 64, 4, 2), tiling.shared_memory_bytes(64, 256, 64, 'fp32', "
                                               "2), unit='B')\n"
                                               ">>> for name in ['T4', 'A100-80GB', 'H100-SXM']:\n"
                                               '...     for config in [(128, 128, 64, 2, 4), (128, 256, 64, 2, 3), (64, 64, 32, 4, 2)]:\n'
                                               "...         want = tiling.shared_memory_budget(name, *config[:3], {2: 'fp16', 4: 'fp32'}[config[3]], config[4]).fits\n"
                                               "...         got = call('fits', fits, name, *config)\n"
                                               "...         check_true(got == want, f'fits({name!r}, *{config}) returned {got!r}; expected {want}.')\n"
                                               ">>> check_close('largest_square_tile_t4', largest_square_tile_t4, 128)\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
