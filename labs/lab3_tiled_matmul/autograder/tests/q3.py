OK_FORMAT = True

test = {   'name': 'q3',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import tiling\n'
                                               '>>> from gpuperf.grading import call, check_close, check_true\n'
                                               ">>> result = call('wave_stats', wave_stats, 2048, 2048, 128, 128, 'A100-80GB')\n"
                                               ">>> check_true(isinstance(result, tuple) and len(result) == 3, f'wave_stats should return a tuple (tiles, waves, wave_efficiency), got {result!r}')\n"
                                               ">>> ref = tiling.wave_quantization(2048, 2048, 128, 128, 'A100-80GB')\n"
                                               ">>> check_close('tiles', result[0], ref.tiles)\n"
                                               ">>> check_close('waves', result[1], ref.waves)\n"
                                               ">>> check_close('wave_efficiency', result[2], ref.wave_efficiency)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import tiling\n'
                                               '>>> from gpuperf.grading import call, check_close\n'
                                               ">>> for args in [(1000, 3000, 64, 128, 'T4'), (4097, 4096, 128, 256, 'H100-SXM')]:\n"
                                               "...     result = call('wave_stats', wave_stats, *args)\n"
                                               '...     ref = tiling.wave_quantization(*args)\n'
                                               "...     check_close(f'wave_stats{args}[0] (tiles)', result[0], ref.tiles)\n"
                                               "...     check_close(f'wave_stats{args}[1] (waves)', result[1], ref.waves)\n"
                                               "...     check_close(f'wave_stats{args}[2] (efficiency)', result[2], ref.wave_efficiency)\n"
                                               ">>> check_close('eff_2048', eff_2048, tiling.wave_efficiency(2048, 2048, 256, 128, 'H100-SXM'))\n"
                                               ">>> check_close('eff_2049', eff_2049, tiling.wave_efficiency(2049, 2049, 256, 128, 'H100-SXM'))\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
