OK_FORMAT = True

test = {   'name': 'q3',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import tiling\n'
                                               '>>> from gpuperf.grading import answered, call, check_close, check_true, safe_repr\n'
                                               ">>> _result = call('wave_stats', wave_stats, 2048, 2048, 128, 128, 'A100-80GB')\n"
                                               ">>> check_true(isinstance(_result, tuple) and len(_result) == 3, f'wave_stats should return a tuple (tiles, waves, wave_efficiency), got "
                                               "{safe_repr(_result)}')\n"
                                               ">>> _ref = tiling.wave_quantization(2048, 2048, 128, 128, 'A100-80GB')\n"
                                               ">>> check_close('tiles', _result[0], _ref.tiles)\n"
                                               ">>> check_close('waves', _result[1], _ref.waves)\n"
                                               ">>> check_close('wave_efficiency', _result[2], _ref.wave_efficiency)\n"
                                               ">>> _ = answered('eff_2048', eff_2048)\n"
                                               ">>> _ = answered('eff_2049', eff_2049)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
