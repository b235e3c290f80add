// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/**
 * @title HTLC
 * @notice Hash time-locked contract for one ERC-20 token, compatible with Garden's v3 HTLC.
 * An order locks `amount` tokens for `redeemer`, who gets them by revealing the secret whose sha256 is
 * `secretHash`; after `timelock` blocks the `initiator` can take them back. Payouts always go to the
 * order's recorded addresses, never to the caller, so anyone may submit redeems and refunds.
 * @dev Tokens that take a fee on transfer or rebase are not supported: the order records `amount`.
 */
contract HTLC is EIP712("HTLC", "3") {
    using SafeERC20 for IERC20;

    struct Order {
        address initiator;
        address redeemer;
        uint256 initiatedAt;
        uint256 timelock;
        uint256 amount;
        uint256 fulfilledAt;
    }

    bytes32 private constant INITIATE_TYPEHASH =
        keccak256("Initiate(address redeemer,uint256 timelock,uint256 amount,bytes32 secretHash)");
    bytes32 private constant REFUND_TYPEHASH = keccak256("Refund(bytes32 orderId)");

    /// @notice The ERC-20 token this contract locks.
    IERC20 public immutable token;

    /// @notice Orders by id. An order is initiated when `initiator` is set and settled when `fulfilledAt` is.
    mapping(bytes32 => Order) public orders;

    event Initiated(bytes32 indexed orderID, bytes32 indexed secretHash, uint256 indexed amount);
    event Redeemed(bytes32 indexed orderID, bytes32 indexed secretHash, bytes secret);
    event Refunded(bytes32 indexed orderID);

    error HTLC__ZeroAddressRedeemer();
    error HTLC__ZeroAddressInitiator();
    error HTLC__ZeroTimelock();
    error HTLC__ZeroAmount();
    error HTLC__SameInitiatorAndRedeemer();
    error HTLC__SameFunderAndRedeemer();
    error HTLC__DuplicateOrder();
    error HTLC__InvalidInitiatorSignature();
    error HTLC__InvalidSecretLength();
    error HTLC__OrderNotInitiated();
    error HTLC__OrderFulfilled();
    error HTLC__IncorrectSecret();
    error HTLC__OrderNotExpired();
    error HTLC__InvalidRedeemerSignature();

    constructor(address token_) {
        token = IERC20(token_);
    }

    /**
     * @notice Locks `amount` tokens from the caller, who is the order's initiator (and gets any refund).
     * @param redeemer Who receives the tokens against the secret.
     * @param timelock Blocks after initiation from which (exclusive) the initiator may refund.
     * @param amount Tokens to lock; the caller must have approved this contract for them.
     * @param secretHash sha256 of the 32-byte secret.
     */
    function initiate(address redeemer, uint256 timelock, uint256 amount, bytes32 secretHash) external {
        _initiate(msg.sender, msg.sender, redeemer, timelock, amount, secretHash);
    }

    /**
     * @notice Locks `amount` tokens from the caller for an order whose initiator is `initiator` (it gets any
     * refund). The funder is not part of the order id, so relayers can fund orders for users.
     * @dev The caller must not be the redeemer.
     */
    function initiateOnBehalf(address initiator, address redeemer, uint256 timelock, uint256 amount, bytes32 secretHash)
        external
    {
        if (msg.sender == redeemer) revert HTLC__SameFunderAndRedeemer();
        _initiate(msg.sender, initiator, redeemer, timelock, amount, secretHash);
    }

    /**
     * @notice Gasless initiate: locks `amount` tokens from `initiator`, who approved this contract and signed
     * the EIP-712 `Initiate(redeemer,timelock,amount,secretHash)` (EOA or ERC-1271 wallet). Anyone may submit.
     * @dev A replayed signature yields the same order id and so fails with `HTLC__DuplicateOrder`.
     */
    function initiateWithSignature(
        address initiator,
        address redeemer,
        uint256 timelock,
        uint256 amount,
        bytes32 secretHash,
        bytes calldata signature
    ) external {
        bytes32 digest =
            _hashTypedDataV4(keccak256(abi.encode(INITIATE_TYPEHASH, redeemer, timelock, amount, secretHash)));
        if (!SignatureChecker.isValidSignatureNowCalldata(initiator, digest, signature)) {
            revert HTLC__InvalidInitiatorSignature();
        }
        _initiate(initiator, initiator, redeemer, timelock, amount, secretHash);
    }

    /**
     * @notice Pays the order's redeemer against the secret. Anyone may call.
     * @param secret The 32-byte preimage of the order's secret hash; it is published in `Redeemed`.
     */
    function redeem(bytes32 orderID, bytes calldata secret) external {
        if (secret.length != 32) revert HTLC__InvalidSecretLength();
        Order storage order = _openOrder(orderID);
        bytes32 secretHash = sha256(secret);
        if (_orderId(secretHash, order.initiator, order.redeemer, order.timelock, order.amount) != orderID) {
            revert HTLC__IncorrectSecret();
        }
        order.fulfilledAt = block.number;
        emit Redeemed(orderID, secretHash, secret);
        token.safeTransfer(order.redeemer, order.amount);
    }

    /**
     * @notice Returns the tokens to the initiator once the timelock has passed, i.e. from block
     * `initiatedAt + timelock + 1` on. Anyone may call.
     */
    function refund(bytes32 orderID) external {
        Order storage order = _openOrder(orderID);
        // Same as `initiatedAt + timelock < block.number`, without overflow for huge timelocks.
        if (block.number - order.initiatedAt <= order.timelock) revert HTLC__OrderNotExpired();
        order.fulfilledAt = block.number;
        emit Refunded(orderID);
        token.safeTransfer(order.initiator, order.amount);
    }

    /**
     * @notice Returns the tokens to the initiator before the timelock, with the redeemer's consent: either the
     * redeemer calls, or `signature` is the redeemer's EIP-712 `Refund(orderId)` signature (EOA or ERC-1271).
     */
    function instantRefund(bytes32 orderID, bytes calldata signature) external {
        Order storage order = _openOrder(orderID);
        if (msg.sender != order.redeemer) {
            if (!SignatureChecker.isValidSignatureNowCalldata(order.redeemer, instantRefundDigest(orderID), signature)) {
                revert HTLC__InvalidRedeemerSignature();
            }
        }
        order.fulfilledAt = block.number;
        emit Refunded(orderID);
        token.safeTransfer(order.initiator, order.amount);
    }

    /// @notice The EIP-712 digest the redeemer signs to consent to an instant refund of `orderID`.
    function instantRefundDigest(bytes32 orderID) public view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(REFUND_TYPEHASH, orderID)));
    }

    function _initiate(
        address funder,
        address initiator,
        address redeemer,
        uint256 timelock,
        uint256 amount,
        bytes32 secretHash
    ) private {
        if (redeemer == address(0)) revert HTLC__ZeroAddressRedeemer();
        if (initiator == address(0)) revert HTLC__ZeroAddressInitiator();
        if (initiator == redeemer) revert HTLC__SameInitiatorAndRedeemer();
        if (timelock == 0) revert HTLC__ZeroTimelock();
        if (amount == 0) revert HTLC__ZeroAmount();
        bytes32 orderID = _orderId(secretHash, initiator, redeemer, timelock, amount);
        if (orders[orderID].initiator != address(0)) revert HTLC__DuplicateOrder();
        orders[orderID] = Order(initiator, redeemer, block.number, timelock, amount, 0);
        emit Initiated(orderID, secretHash, amount);
        token.safeTransferFrom(funder, address(this), amount);
    }

    function _openOrder(bytes32 orderID) private view returns (Order storage order) {
        order = orders[orderID];
        if (order.initiator == address(0)) revert HTLC__OrderNotInitiated();
        if (order.fulfilledAt != 0) revert HTLC__OrderFulfilled();
    }

    function _orderId(bytes32 secretHash, address initiator, address redeemer, uint256 timelock, uint256 amount)
        private
        view
        returns (bytes32)
    {
        return sha256(abi.encode(block.chainid, secretHash, initiator, redeemer, timelock, amount, address(this)));
    }
}
