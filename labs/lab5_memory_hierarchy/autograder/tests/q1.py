OK_FORMAT = True

test = {   'name': 'q1',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import memory\n'
                                               '>>> from gpuperf.grading import call, check_close\n'
                                               '>>> for args in [(1, 0, 4), (2, 0, 4), (1, 1, 4)]:\n'
                                               '...     ref = memory.coalescing(stride=args[0], offset=args[1], element_bytes=args[2])\n'
                                               "...     check_close(f'warp_sectors{args}', call('warp_sectors', warp_sectors, *args), ref.transactions, hints={0.8: 'an offset shifts the warp across "
                                               "one more sector boundary', 0.5: 'count sectors of 32 bytes: address // 32'})\n"
                                               "...     check_close(f'sector_efficiency{args}', call('sector_efficiency', sector_efficiency, *args), ref.efficiency)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q1', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
