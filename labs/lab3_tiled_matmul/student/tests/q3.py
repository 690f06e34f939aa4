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
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
