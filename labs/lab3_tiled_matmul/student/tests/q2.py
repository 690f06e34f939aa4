OK_FORMAT = True

test = {   'name': 'q2',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import tiling\n'
                                               '>>> from gpuperf.grading import answered, call, check_close\n'
                                               ">>> check_close('smem_bytes(128, 128, 32, 2, 3)', call('smem_bytes', smem_bytes, 128, 128, 32, 2, 3), tiling.shared_memory_bytes(128, 128, 32, 'fp16', "
                                               "3), unit='B', hints={0.5: 'both panels are in shared memory: A (BM×BK) and B (BK×BN)', 1 / 3: 'multiply by the number of stages'})\n"
                                               ">>> _ = answered('fits', fits)\n"
                                               ">>> _ = answered('largest_square_tile_t4', largest_square_tile_t4)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
