from tests.support.fake_telegram import fake_telegram

__all__ = ["fake_telegram"]
